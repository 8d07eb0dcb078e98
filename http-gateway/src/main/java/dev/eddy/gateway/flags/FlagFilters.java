package dev.eddy.gateway.flags;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import java.util.List;
import java.util.regex.Pattern;

/** Checks a flag's key and filters the way PostHog refuses bad ones: each problem a 400 naming the field. */
final class FlagFilters {
    private static final Pattern KEY = Pattern.compile("^[a-zA-Z0-9_-]{1,400}$");

    private FlagFilters() {
    }

    static String key(final String key) {
        if (key == null || !KEY.matcher(key).matches()) {
            throw ApiError.badRequest("invalid_input",
                    "Only letters, numbers, hyphens (-) and underscores (_) are allowed in a flag key.", "key");
        }
        return key;
    }

    static void check(final JsonNode filters) {
        final JsonNode groups = filters.path("groups");
        if (!groups.isMissingNode() && !groups.isArray()) {
            throw invalid("'groups' must be a list of condition groups.");
        }
        for (final JsonNode group : groups) {
            final JsonNode rollout = group.get("rollout_percentage");
            if (rollout != null && !rollout.isNull() && (!rollout.isNumber() || rollout.asDouble() < 0 || rollout.asDouble() > 100)) {
                throw invalid("Every rollout_percentage must be a number from 0 to 100.");
            }
            final JsonNode properties = group.path("properties");
            if (!properties.isMissingNode() && !properties.isNull() && !properties.isArray()) {
                throw invalid("A condition group's properties must be a list.");
            }
            for (final JsonNode p : properties) {
                if (!p.path("key").isTextual()) {
                    throw invalid("Every property filter needs a key.");
                }
                final String type = p.path("type").asText("person");
                switch (type) {
                    case "person" -> { }
                    case "group" -> {
                        if (!p.path("group_type_index").isIntegralNumber()) {
                            throw invalid("A group property filter needs its group_type_index.");
                        }
                    }
                    case "cohort" -> {
                        if (!p.path("value").canConvertToLong() || p.path("value").isBoolean()) {
                            throw invalid("A cohort filter's value is the id of a cohort.");
                        }
                        final String operator = p.path("operator").asText("in");
                        if (!List.of("in", "not_in", "exact").contains(operator)) {
                            throw invalid("A cohort filter's operator is in or not_in, got '" + operator + "'.");
                        }
                    }
                    // Refused rather than stored as a condition that could never match.
                    case "flag" -> throw invalid("Filters on other flags are not supported by Eddy yet.");
                    default -> throw invalid("Unknown property filter type '" + type + "': use person or group.");
                }
            }
        }
        final JsonNode variants = filters.path("multivariate").path("variants");
        if (!variants.isMissingNode() && !variants.isNull()) {
            if (!variants.isArray()) {
                throw invalid("multivariate.variants must be a list.");
            }
            double total = 0;
            for (final JsonNode v : variants) {
                if (!v.path("key").isTextual() || v.get("key").asText().isBlank()) {
                    throw invalid("Every variant needs a key.");
                }
                if (!v.path("rollout_percentage").isNumber()) {
                    throw invalid("Every variant needs a rollout_percentage.");
                }
                total += v.get("rollout_percentage").asDouble();
            }
            if (variants.size() > 0 && Math.abs(total - 100) > 1e-9) {
                throw invalid("Invalid variant definitions: Variant rollout percentages must sum to 100.");
            }
        }
        final JsonNode index = filters.get("aggregation_group_type_index");
        if (index != null && !index.isNull() && (!index.isIntegralNumber() || index.asInt() < 0 || index.asInt() > 4)) {
            throw invalid("aggregation_group_type_index must be a group type index from 0 to 4.");
        }
        final JsonNode payloads = filters.get("payloads");
        if (payloads != null && !payloads.isNull() && !payloads.isObject()) {
            throw invalid("payloads must map 'true' or variant keys to payloads.");
        }
    }

    private static ApiError invalid(final String detail) {
        return ApiError.badRequest("invalid_input", detail, "filters");
    }
}
