package dev.eddy.gateway.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Compares secrets in constant time. Both sides are hashed first, so the comparison takes as long whatever the
 * given value's length and wherever it first differs: a caller learns neither a prefix nor the length of the secret.
 */
public final class Secrets {
    private Secrets() {
    }

    /** Whether {@code given} is {@code expected}; a null {@code given} is not. */
    public static boolean equal(final String expected, final String given) {
        if (given == null) {
            // Still hash once, so a missing value costs the caller what a wrong one does.
            MessageDigest.isEqual(sha256(expected), sha256(""));
            return false;
        }
        return MessageDigest.isEqual(sha256(expected), sha256(given));
    }

    /** The SHA-256 of {@code value}'s UTF-8 bytes. */
    public static byte[] sha256(final String value) {
        return sha256(value.getBytes(StandardCharsets.UTF_8));
    }

    public static byte[] sha256(final byte[] value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value);
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
