package dev.eddy.config;

import com.typesafe.config.Config;

/**
 * Limits of the public ingestion routes.
 *
 * @param maxEventBodyBytes largest body of the single-event routes
 * @param maxBatchBodyBytes largest body of {@code /batch}
 * @param maxDecodedBytes   largest payload after decompression
 * @param overflow          spike detection
 */
public record CaptureConfig(int maxEventBodyBytes, int maxBatchBodyBytes, int maxDecodedBytes, Overflow overflow) {

    public CaptureConfig {
        Validation.require(maxEventBodyBytes >= 1024, "capture.max-event-body-bytes must be at least 1024");
        Validation.require(maxBatchBodyBytes >= maxEventBodyBytes,
                "capture.max-batch-body-bytes must be at least capture.max-event-body-bytes");
        Validation.require(maxDecodedBytes >= maxBatchBodyBytes,
                "capture.max-decoded-bytes must be at least capture.max-batch-body-bytes");
    }

    /**
     * Per {@code token:distinct_id} token bucket; events past it go to the overflow topic.
     *
     * @param enabled         whether live events are rerouted at all
     * @param eventsPerSecond sustained rate of one key
     * @param burst           bucket capacity
     */
    public record Overflow(boolean enabled, int eventsPerSecond, int burst) {
        public Overflow {
            Validation.require(eventsPerSecond >= 1, "capture.overflow.events-per-second must be positive");
            Validation.require(burst >= 1, "capture.overflow.burst must be positive");
        }
    }

    static CaptureConfig from(final Config root) {
        final Config c = root.getConfig("capture");
        return new CaptureConfig(
                c.getBytes("max-event-body-bytes").intValue(),
                c.getBytes("max-batch-body-bytes").intValue(),
                c.getBytes("max-decoded-bytes").intValue(),
                new Overflow(c.getBoolean("overflow.enabled"), c.getInt("overflow.events-per-second"), c.getInt("overflow.burst")));
    }
}
