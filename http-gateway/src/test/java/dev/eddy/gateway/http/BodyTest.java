package dev.eddy.gateway.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BodyTest {

    @Test
    void textPostgresqlCannotStoreIsABadRequestNamingTheField() {
        // Before, these reached PostgreSQL, which failed the statement: a 500.
        assertRefused("{\"name\":\"a\\u0000b\"}", "null_characters_not_allowed", "name", "Null characters are not allowed.");
        assertRefused("{\"name\":\"x\",\"filters\":{\"events\":[{\"id\":\"\\ud800\"}]}}", "surrogate_characters_not_allowed", "filters",
                "Surrogate characters are not allowed: U+D800.");
        assertRefused("{\"tags\":[\"ok\",\"\\udfff\"]}", "surrogate_characters_not_allowed", "tags", "Surrogate characters are not allowed: U+DFFF.");
        assertRefused("{\"filters\":{\"\\u0000\":1}}", "null_characters_not_allowed", "filters", "Null characters are not allowed.");
    }

    @Test
    void pairedSurrogatesAndOtherControlCharactersAreStored() {
        final Body body = Body.parse("{\"name\":\"🎉 \\ud83c\\udf89 \\u0001 ﷺ\",\"tags\":[\"\\u202e\"]}");
        assertThat(body.string("name", 400)).isEqualTo("🎉 🎉 \u0001 ﷺ");
        assertThat(body.strings("tags")).containsExactly("\u202e");
    }

    private static void assertRefused(final String json, final String code, final String attr, final String detail) {
        assertThatThrownBy(() -> Body.parse(json)).as(json).isInstanceOfSatisfying(ApiError.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo(code);
            assertThat(e.attr()).isEqualTo(attr);
            assertThat(e.detail()).isEqualTo(detail);
        });
    }
}
