package dev.eddy.flags;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * PostHog's flag hash, bit for bit: SHA-1 of {@code "<flag key>.<id><salt>"}, its first 15 hex digits as an
 * integer, over {@code 0xFFFFFFFFFFFFFFF}: a number in [0, 1] that is the same in every PostHog SDK and server, so
 * a user keeps their rollout bucket and variant when moving to Eddy.
 */
public final class FlagHash {
    /** The largest value of 15 hex digits. */
    private static final double SCALE = 0xFFFFFFFFFFFFFFFL;
    private static final ThreadLocal<MessageDigest> SHA1 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-1");
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-1", e);
        }
    });

    private FlagHash() {
    }

    /**
     * @param flagKey the flag's key
     * @param id      the distinct id, or the group key for group-aggregated flags
     * @param salt    "" for the rollout, "variant" for the variant
     */
    public static double of(final String flagKey, final String id, final String salt) {
        final byte[] digest = SHA1.get().digest((flagKey + "." + id + salt).getBytes(StandardCharsets.UTF_8));
        long first = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            first = (first << 8) | (digest[i] & 0xff);
        }
        // 15 hex digits are the digest's top 60 bits.
        return (first >>> 4) / SCALE;
    }
}
