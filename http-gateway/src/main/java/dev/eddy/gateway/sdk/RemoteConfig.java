package dev.eddy.gateway.sdk;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What a project tells PostHog's browser and mobile SDKs at start-up: which compressions capture accepts, where events
 * go, and which products are on. Served whole as remote config ({@code /array/:token/config} and {@code config.js},
 * which posthog-js loads before anything else) and in part inside {@code /decide} and {@code /flags?config=true}
 * answers, so every route says the same. Eddy has PostHog's event analytics and feature flags; the products it does not
 * have (session recording, surveys, heatmaps, web vitals, exception autocapture, logs, conversations, product tours,
 * site apps) are answered as off, the way PostHog answers a project that has not switched them on, so an SDK neither
 * loads their scripts nor sends their data.
 */
public final class RemoteConfig {
    /** Where PostHog's current SDKs send events ({@code analytics.endpoint}); Eddy's capture serves it. */
    static final String ANALYTICS_ENDPOINT = "/i/v0/e/";
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private RemoteConfig() {
    }

    /**
     * The remote config of a project, as PostHog's {@code RemoteConfig.build_config} answers for a project with
     * nothing but analytics and flags switched on.
     *
     * @param hasFeatureFlags whether the project has an active flag: without one posthog-js does not ask for flags
     */
    public static ObjectNode of(final String token, final boolean hasFeatureFlags) {
        final ObjectNode config = NODES.objectNode();
        config.put("token", token);
        config.put("hasFeatureFlags", hasFeatureFlags);
        addProducts(config);
        config.putArray("siteApps");
        return config;
    }

    /**
     * The configuration keys of a {@code /decide} answer, or of a {@code /flags} answer asked with {@code config=true}
     * (PostHog's {@code apply_core_config_fields}), in {@code answer}.
     */
    public static void addToFlagsAnswer(final ObjectNode answer) {
        answer.putObject("config").put("enable_collect_everything", true);
        answer.putObject("toolbarParams");
        answer.put("isAuthenticated", false);
        addProducts(answer);
        answer.putArray("siteApps");
    }

    private static void addProducts(final ObjectNode config) {
        config.putArray("supportedCompression").add("gzip").add("gzip-js");
        config.put("captureDeadClicks", false);
        config.put("capturePerformance", false);
        config.put("autocapture_opt_out", false);
        config.put("autocaptureExceptions", false);
        config.putObject("analytics").put("endpoint", ANALYTICS_ENDPOINT);
        config.put("elementsChainAsString", true);
        final ObjectNode errorTracking = config.putObject("errorTracking");
        errorTracking.put("autocaptureExceptions", false);
        errorTracking.putArray("suppressionRules");
        config.putObject("logs").put("captureConsoleLogs", false);
        config.put("sessionRecording", false);
        config.put("heatmaps", false);
        config.put("conversations", false);
        config.put("surveys", false);
        config.put("productTours", false);
        config.put("defaultIdentifiedOnly", true);
    }
}
