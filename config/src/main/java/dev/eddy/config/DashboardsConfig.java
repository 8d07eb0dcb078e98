package dev.eddy.config;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * Live dashboards: how often a project's dashboards that someone watches ({@code .../dashboards/:id/stream},
 * {@code /shared/:access_token/stream}) look for new events, and how many watchers one instance serves.
 *
 * @param liveDebounce       how often each watched project's change counter is read: its tiles are recalculated at
 *                           most once per interval, however many events arrive meanwhile
 * @param liveMaxSubscribers open streams this instance serves at once; one more is answered 503
 */
public record DashboardsConfig(Duration liveDebounce, int liveMaxSubscribers) {

    public DashboardsConfig {
        Validation.require(!liveDebounce.isNegative() && liveDebounce.toMillis() >= 10, "dashboards.live-debounce must be at least 10ms");
        Validation.require(liveMaxSubscribers >= 1, "dashboards.live-max-subscribers must be at least 1");
    }

    static DashboardsConfig from(final Config root) {
        final Config c = root.getConfig("dashboards");
        return new DashboardsConfig(c.getDuration("live-debounce"), c.getInt("live-max-subscribers"));
    }
}
