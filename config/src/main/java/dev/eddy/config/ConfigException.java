package dev.eddy.config;

/** A configuration that cannot be loaded or is invalid; Eddy refuses to start with it. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(final String message) {
        super(message);
    }

    public ConfigException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
