package dev.eddy.insights;

/**
 * One instance's share of an insight's answer: shares of disjoint data merge into the whole, and travel between
 * instances as bytes that the same query decodes ({@link PartialQuery#decode}).
 *
 * @param <P> the share's own type
 */
public interface Mergeable<P extends Mergeable<P>> {
    /** Adds {@code other} into this share; this share, merged. */
    P merge(P other);

    byte[] encode();
}
