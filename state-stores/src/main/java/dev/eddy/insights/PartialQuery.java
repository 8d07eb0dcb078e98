package dev.eddy.insights;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An insight query answered from shares ({@link Mergeable}) that each instance reads over its own partitions: an
 * empty share to read into, a share from another instance's bytes, and PostHog's result from the merged whole.
 *
 * @param <P> its shares
 */
public interface PartialQuery<P extends Mergeable<P>> {
    P partial();

    /**
     * @throws IllegalArgumentException when the bytes are not a share of this query
     */
    P decode(byte[] bytes);

    JsonNode result(P whole);
}
