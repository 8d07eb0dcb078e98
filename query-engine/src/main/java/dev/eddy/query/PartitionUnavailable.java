package dev.eddy.query;

/**
 * A partition (or global store) this instance cannot read now: it moved to another instance in a rebalance, is still
 * restoring, or a block it was reading was removed under it. The read is to be tried again, where the partition is
 * now; never answered from what was read so far.
 */
public final class PartitionUnavailable extends RuntimeException {
    public PartitionUnavailable(final String message) {
        super(message);
    }

    public PartitionUnavailable(final String message, final Throwable cause) {
        super(message, cause);
    }
}
