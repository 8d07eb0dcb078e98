package dev.eddy.query;

/** A query refused for what it asks (a bad filter, a range too large to hold): PostHog answers those with a 400. */
public final class InvalidQuery extends RuntimeException {
    public InvalidQuery(final String message) {
        super(message);
    }

    /** The value of {@code parse}, or the reason it refused its input as an {@link InvalidQuery}. */
    public static <T> T refusing(final java.util.function.Supplier<T> parse) {
        try {
            return parse.get();
        } catch (final IllegalArgumentException e) {
            throw new InvalidQuery(e.getMessage());
        }
    }
}
