package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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

    @Test
    void aKnownTokenKeepsWorkingWhileTheDatabaseIsDownAndFollowsItOnceBack() {
        final AtomicLong now = new AtomicLong();
        final AtomicReference<Optional<Long>> database = new AtomicReference<>(Optional.of(7L));
        final AtomicInteger lookups = new AtomicInteger();
        final ProjectTokens tokens = new ProjectTokens(token -> {
            lookups.incrementAndGet();
            return database.get() == null ? Future.failedFuture(new java.net.ConnectException("Connection refused"))
                    : Future.succeededFuture(database.get());
        }, now::get, Runnable::run);

        assertThat(tokens.projectOf("phc_live", null).result()).contains(7L);
        database.set(null);
        for (final Duration later : List.of(Duration.ofMinutes(2), Duration.ofMinutes(30), Duration.ofHours(23))) {
            now.set(later.toNanos());
            final Future<Optional<Long>> project = tokens.projectOf("phc_live", null);
            assertThat(project.succeeded()).as("after " + later).isTrue();
            assertThat(project.result()).as("after " + later).contains(7L);
        }
        // Each use past the refresh time asked the database again (and kept the answer it had when that failed).
        assertThat(lookups).hasValue(4);

        // Back, with the token reset: the first use past the refresh time looks it up (here at once, the lookups run
        // on the calling thread) and gets the new answer.
        database.set(Optional.empty());
        now.addAndGet(Duration.ofMinutes(2).toNanos());
        assertThat(tokens.projectOf("phc_live", null).result()).isEmpty();
        assertThat(lookups).hasValue(5);
    }

    @Test
    void aKnownTokenIsForgottenADayAfterTheDatabaseLastConfirmedIt() {
        final AtomicLong now = new AtomicLong();
        final AtomicBoolean up = new AtomicBoolean(true);
        final ProjectTokens tokens = new ProjectTokens(token -> up.get() ? Future.succeededFuture(Optional.of(7L))
                : Future.failedFuture(new java.net.ConnectException("Connection refused")), now::get, Runnable::run);

        assertThat(tokens.projectOf("phc_live", null).result()).contains(7L);
        up.set(false);
        now.set(Duration.ofHours(25).toNanos());
        assertThat(tokens.projectOf("phc_live", null).failed()).isTrue();
    }
}
