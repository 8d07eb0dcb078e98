package dev.eddy.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ApiKeysTest {

    @Test
    void hashIsPostHogsSha256FormOfTheKey() {
        // sha256("phx_test") computed independently with `printf phx_test | sha256sum`.
        assertThat(ApiKeys.hash("phx_test"))
                .isEqualTo("sha256$8ee44936f3b1c80173d2860f716f56dc44bd078df2ff5c4cb9fb4aed6f26860d");
        assertThat(ApiKeys.hash("phx_test")).isNotEqualTo(ApiKeys.hash("phx_tesu"));
    }

    @Test
    void generatedKeysHavePostHogsPrefixesAndAreUnique() {
        final Set<String> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            final String project = ApiKeys.newProjectToken();
            final String personal = ApiKeys.newPersonalKey();
            assertThat(project).startsWith("phc_").hasSize(47).matches("phc_[A-Za-z0-9]+");
            assertThat(personal).startsWith("phx_").hasSize(51).matches("phx_[A-Za-z0-9]+");
            assertThat(seen.add(project)).isTrue();
            assertThat(seen.add(personal)).isTrue();
        }
    }

    @Test
    void maskShowsOnlyTheEnds() {
        assertThat(ApiKeys.mask("phx_abcdefghijklmnop1234")).isEqualTo("phx_...1234");
        assertThat(ApiKeys.mask("short")).isEqualTo("********");
    }

    @Test
    void writeScopeGrantsReadOfTheSameObjectOnly() {
        assertThat(Scope.allows(List.of("insight:write"), "insight:read")).isTrue();
        assertThat(Scope.allows(List.of("insight:write"), "insight:write")).isTrue();
        assertThat(Scope.allows(List.of("insight:read"), "insight:write")).isFalse();
        assertThat(Scope.allows(List.of("insight:write"), "dashboard:read")).isFalse();
        assertThat(Scope.allows(List.of("*"), "project:write")).isTrue();
        assertThat(Scope.allows(List.of(), "project:read")).isFalse();
    }
}
