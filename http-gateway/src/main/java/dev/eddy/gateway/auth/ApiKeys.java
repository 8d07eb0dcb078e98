package dev.eddy.gateway.auth;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Generates project and personal API keys and hashes personal keys for storage. Keys are long random
 * secrets, so a single SHA-256 is enough (no slow hash): the stored form is PostHog's {@code sha256$<hex>},
 * and only that form ever reaches the database or a log.
 */
public final class ApiKeys {
    public static final String PROJECT_PREFIX = "phc_";
    public static final String PERSONAL_PREFIX = "phx_";
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = new SecureRandom();

    private ApiKeys() {
    }

    public static String newProjectToken() {
        return PROJECT_PREFIX + random(43);
    }

    public static String newPersonalKey() {
        return PERSONAL_PREFIX + random(47);
    }

    /** A secret for calls between this process's own parts, when the deployment configured none. */
    public static String newInternalSecret() {
        return random(43);
    }

    /** The stored form of a personal API key. */
    public static String hash(final String key) {
        return "sha256$" + HexFormat.of().formatHex(Secrets.sha256(key));
    }

    /** What a listing may show of a key: its first and last four characters. */
    public static String mask(final String key) {
        return key.length() <= 8 ? "********" : key.substring(0, 4) + "..." + key.substring(key.length() - 4);
    }

    private static String random(final int length) {
        final StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
        }
        return sb.toString();
    }
}
