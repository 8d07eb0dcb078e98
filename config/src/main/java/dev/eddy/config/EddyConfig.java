package dev.eddy.config;

import com.typesafe.config.Config;

/** Everything one Eddy process is configured with, read once at start-up. */
public record EddyConfig(
        Role role,
        HttpConfig http,
        KafkaConfig kafka,
        StreamsConfig streams,
        PostgresConfig pg,
        CaptureConfig capture,
        BootstrapConfig bootstrap,
        GeoIpConfig geoip,
        InsightsConfig insights,
        DashboardsConfig dashboards,
        RateLimitsConfig rateLimits) {

    static EddyConfig from(final Config c) {
        return new EddyConfig(
                Role.parse(c.getString("role")),
                HttpConfig.from(c.getConfig("http")),
                KafkaConfig.from(c),
                StreamsConfig.from(c),
                PostgresConfig.from(c),
                CaptureConfig.from(c),
                BootstrapConfig.from(c),
                GeoIpConfig.from(c),
                InsightsConfig.from(c),
                DashboardsConfig.from(c),
                RateLimitsConfig.from(c));
    }

    /** The Streams application id, namespaced like the topics. */
    public String applicationId() {
        return kafka.topicPrefix() + streams.applicationId();
    }

    public EddyConfig withRole(final Role newRole) {
        return new EddyConfig(newRole, http, kafka, streams, pg, capture, bootstrap, geoip, insights, dashboards, rateLimits);
    }
}
