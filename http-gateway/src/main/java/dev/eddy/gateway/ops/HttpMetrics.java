package dev.eddy.gateway.ops;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.DoubleStream;

/**
 * How Vert.x's HTTP server metrics are published: by route as well as method and code (one series per route, never per
 * URL: {@code /flags}, {@code /api/projects/:project_id/insights/trend}), response times as a histogram of fixed buckets
 * so latency quantiles can be computed across routes and processes ({@code histogram_quantile}).
 */
public final class HttpMetrics {
    private static final String RESPONSE_TIME = "vertx.http.server.response.time";
    /** Upper bounds of the response-time buckets, in nanoseconds: 1 ms to 10 s. */
    private static final double[] BUCKETS = DoubleStream.of(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
            .map(seconds -> seconds * 1e9).toArray();

    private HttpMetrics() {
    }

    /** Vert.x's metrics options: its default labels and the route. */
    public static MicrometerMetricsOptions options() {
        final MicrometerMetricsOptions options = new MicrometerMetricsOptions().setEnabled(true);
        final Set<Label> labels = EnumSet.copyOf(options.getLabels());
        labels.add(Label.HTTP_ROUTE);
        return options.setLabels(labels);
    }

    /** The registry's filters for those metrics; before any is registered. */
    public static void configure(final MeterRegistry registry) {
        // Vert.x names a request's route by every route that handled it ("/api/>/api/>/api/projects/:project_id/..."
        // through the body, auth and contract handlers); the last is the one that answered.
        registry.config().meterFilter(MeterFilter.replaceTagValues("route", route -> route.substring(route.lastIndexOf('>') + 1)));
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(final Meter.Id id, final DistributionStatisticConfig config) {
                return RESPONSE_TIME.equals(id.getName())
                        ? DistributionStatisticConfig.builder().serviceLevelObjectives(BUCKETS).build().merge(config) : config;
            }
        });
    }
}
