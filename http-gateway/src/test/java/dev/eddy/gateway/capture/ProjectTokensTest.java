package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ProjectTokensTest {

    @Test
    void aTokenNoProjectCanHaveNeverReachesTheDatabase() {
        final List<String> looked = new ArrayList<>();
        // PostgreSQL refuses a NUL byte in a query parameter: before, /decide answered 503 "database unavailable".
        final ProjectTokens tokens = new ProjectTokens(token -> {
            looked.add(token);
            return token.indexOf('\u0000') >= 0 ? Future.failedFuture(new IllegalStateException("invalid byte sequence"))
                    : Future.succeededFuture(Optional.of(1L));
        });

        for (final String hostile : List.of("phc_a\u0000b", "", "x".repeat(65), "phc_ü", "phx_personal", "\u0000")) {
            final Future<Optional<Long>> project = tokens.projectOf(hostile, null);
            assertThat(project.succeeded()).as(hostile).isTrue();
            assertThat(project.result()).as(hostile).isEmpty();
        }
        assertThat(looked).isEmpty();
        assertThat(tokens.projectOf("phc_" + "x".repeat(60), null).result()).contains(1L);
        assertThat(looked).containsExactly("phc_" + "x".repeat(60));
    }
}
