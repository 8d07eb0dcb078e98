package dev.eddy.config;

import com.typesafe.config.Config;

/**
 * Limits of the public ingestion routes.
 *
 * @param maxEventBodyBytes largest body of the single-event routes
 * @param maxBatchBodyBytes largest body of {@code /batch}
 */
public record CaptureConfig(int maxEventBodyBytes, int maxBatchBodyBytes) {

    public CaptureConfig {
        Validation.require(maxEventBodyBytes >= 1024, "capture.max-event-body-bytes must be at least 1024");
        Validation.require(maxBatchBodyBytes >= maxEventBodyBytes,
                "capture.max-batch-body-bytes must be at least capture.max-event-body-bytes");
    }

    static CaptureConfig from(final Config root) {
        final Config c = root.getConfig("capture");
        return new CaptureConfig(c.getBytes("max-event-body-bytes").intValue(), c.getBytes("max-batch-body-bytes").intValue());
    }
}
