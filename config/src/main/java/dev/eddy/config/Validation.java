package dev.eddy.config;

final class Validation {
    private Validation() {
    }

    static void require(final boolean condition, final String message) {
        if (!condition) {
            throw new ConfigException(message);
        }
    }
}
