package dev.eddy.gateway.db;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A field's new value in a PATCH: as the API shows it (for the activity log's before and after) and as bound to its
 * column.
 */
public record FieldValue(JsonNode json, Object bind) {
}
