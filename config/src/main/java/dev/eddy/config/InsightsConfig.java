package dev.eddy.config;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * How trend and funnel calculations are bounded.
 *
 * @param queryTimeout how long one calculation (every instance's share and the merge) may take before it is
 *                     abandoned with a 504
 */
public record InsightsConfig(Duration queryTimeout) {

    public InsightsConfig {
        Validation.require(!queryTimeout.isNegative() && !queryTimeout.isZero(), "insights.query-timeout must be positive");
    }

    static InsightsConfig from(final Config root) {
        return new InsightsConfig(root.getConfig("insights").getDuration("query-timeout"));
    }
}
