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
 * @param keepFreshFor       how long a dashboard read through the API ({@code GET .../dashboards/:id/}) stays
 *                           maintained after its last read as if someone watched it: its tiles recalculated once per
 *                           {@code liveDebounce} after events changed, so its cached results follow the events and a
 *                           forced refresh adds only what arrived since; zero keeps none
 * @param keepFreshMax       dashboards this instance keeps fresh at most; beyond, the one read longest ago is let go
 */
public record DashboardsConfig(Duration liveDebounce, int liveMaxSubscribers, Duration keepFreshFor, int keepFreshMax) {

    public DashboardsConfig {
        Validation.require(!liveDebounce.isNegative() && liveDebounce.toMillis() >= 10, "dashboards.live-debounce must be at least 10ms");
        Validation.require(liveMaxSubscribers >= 1, "dashboards.live-max-subscribers must be at least 1");
        Validation.require(!keepFreshFor.isNegative(), "dashboards.keep-fresh-for must not be negative");
        Validation.require(keepFreshMax >= 1, "dashboards.keep-fresh-max must be at least 1");
    }

    static DashboardsConfig from(final Config root) {
        final Config c = root.getConfig("dashboards");
        return new DashboardsConfig(c.getDuration("live-debounce"), c.getInt("live-max-subscribers"),
                c.getDuration("keep-fresh-for"), c.getInt("keep-fresh-max"));
    }
}
