package dev.eddy.gateway.projects;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.serde.Json;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** A project's writable fields as a create or an update gives them, with PostHog's errors. */
class ProjectFieldsTest {

    @Test
    void givenFieldsAreCheckedAndTheOthersLeftNull() throws IOException {
        final ProjectFields fields = ProjectFields.of(body("{\"name\":\"  Web  \",\"timezone\":\"Europe/Berlin\",\"week_start_day\":1,"
                + "\"test_account_filters\":[]}"), true);
        assertThat(fields.name()).isEqualTo("Web");
        assertThat(fields.timezone()).isEqualTo("Europe/Berlin");
        assertThat(fields.weekStartDay()).isEqualTo((short) 1);
        assertThat(fields.testAccountFilters().isArray()).isTrue();
        assertThat(ProjectFields.of(body("{\"timezone\":\"UTC\"}"), false)).isEqualTo(new ProjectFields(null, "UTC", null, null));
    }

    @Test
    void aNameIsRequiredToCreateAndCannotBeClearedByAnUpdate() {
        assertThatThrownBy(() -> ProjectFields.of(body("{}"), true)).isInstanceOf(ApiError.class).hasMessage("'name' is required.");
        assertThatThrownBy(() -> ProjectFields.of(body("{\"name\":\"  \"}"), true)).hasMessage("'name' is required.");
        assertThatThrownBy(() -> ProjectFields.of(body("{\"name\":null}"), false)).hasMessage("'name' may not be null.");
        // The other fields' own errors come first, as before fields were typed.
        assertThatThrownBy(() -> ProjectFields.of(body("{\"timezone\":\"Mars/Olympus\"}"), true))
                .hasMessageContaining("'timezone' must be an IANA time zone");
        assertThatThrownBy(() -> ProjectFields.of(body("{\"name\":\"x\",\"week_start_day\":3}"), false))
                .hasMessageContaining("'week_start_day' must be 0 (Sunday) or 1 (Monday)");
        assertThatThrownBy(() -> ProjectFields.of(body("{\"name\":\"x\",\"test_account_filters\":{}}"), false))
                .hasMessageContaining("'test_account_filters' must be a list");
    }

    private static Body body(final String json) throws IOException {
        return Body.of((ObjectNode) Json.mapper().readTree(json));
    }
}
