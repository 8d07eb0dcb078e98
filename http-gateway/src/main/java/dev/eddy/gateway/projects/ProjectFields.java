package dev.eddy.gateway.projects;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import java.time.DateTimeException;
import java.time.ZoneId;

/**
 * The writable fields of a project as a request gives them, checked: null for a field the request does not set.
 *
 * @param name               trimmed, never blank
 * @param timezone           an IANA zone id
 * @param weekStartDay       0 (Sunday) or 1 (Monday)
 * @param testAccountFilters a list of property filters
 */
public record ProjectFields(String name, String timezone, Short weekStartDay, JsonNode testAccountFilters) {

    /** The fields of a create ({@code name} required) or an update ({@code name} may be left out, not cleared). */
    public static ProjectFields of(final Body body, final boolean creating) {
        final String given = body.has("name") ? body.string("name", 200) : null;
        final String name = given == null || given.isBlank() ? null : given.trim();
        String timezone = null;
        if (body.has("timezone")) {
            final String zone = body.string("timezone", 64);
            try {
                timezone = ZoneId.of(zone == null ? "" : zone).getId();
            } catch (final DateTimeException e) {
                throw ApiError.badRequest("invalid_choice", "'timezone' must be an IANA time zone such as Europe/Berlin.", "timezone");
            }
        }
        Short weekStartDay = null;
        if (body.has("week_start_day")) {
            final Long day = body.integer("week_start_day", false);
            if (day != 0 && day != 1) {
                throw ApiError.badRequest("invalid_choice", "'week_start_day' must be 0 (Sunday) or 1 (Monday).", "week_start_day");
            }
            weekStartDay = day.shortValue();
        }
        JsonNode filters = null;
        if (body.has("test_account_filters")) {
            filters = body.raw("test_account_filters");
            if (!filters.isArray()) {
                throw ApiError.badRequest("invalid_input", "'test_account_filters' must be a list of property filters.",
                        "test_account_filters");
            }
        }
        // Checked last, as the other fields' own errors come first.
        if (name == null && creating) {
            throw required();
        }
        if (name == null && body.has("name")) {
            throw ApiError.badRequest("invalid_input", "'name' may not be null.", "name");
        }
        return new ProjectFields(name, timezone, weekStartDay, filters);
    }

    private static ApiError required() {
        return ApiError.badRequest("required", "'name' is required.", "name");
    }
}
