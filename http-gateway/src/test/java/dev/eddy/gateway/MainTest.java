package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.gateway.bootstrap.Bootstrap;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The command line: help, version, arguments, and what the start banner shows of the personal API key. */
class MainTest {
    private static final String KEY = "phx_abcdefghijklmnopqrstuvwxyz0123456789";

    private static String printed(final String... args) throws Exception {
        final PrintStream original = System.out;
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            Main.main(args);
        } finally {
            System.setOut(original);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpAndVersionAnswerWithoutStarting() throws Exception {
        assertThat(printed("--help")).startsWith("usage: eddy [all|gateway|streams] [--config FILE] | --help | --version")
                .contains("EDDY_HTTP_PORT").contains("streams   the Streams topology");
        assertThat(printed("-h")).contains("--config FILE");
        assertThat(printed("--version")).matches("eddy \\S+\\R");
    }

    @Test
    void anUnknownArgumentIsNamed() {
        assertThatThrownBy(() -> Main.parse(new String[] {"all", "--verbose"})).hasMessage("unexpected argument '--verbose'");
        assertThatThrownBy(() -> Main.parse(new String[] {"everything"})).hasMessageContaining("everything");
    }

    @Test
    void theBannerShowsAPersonalKeyWholeOnlyWhenItWasCreatedOrAsked() {
        final Bootstrap.Result created = new Bootstrap.Result(1, "phc_x", Optional.of(KEY), true);
        assertThat(Main.personalKey(created, false)).startsWith(KEY).contains("shown once");
        final Bootstrap.Result configured = new Bootstrap.Result(1, "phc_x", Optional.of(KEY), false);
        assertThat(Main.personalKey(configured, false)).doesNotContain(KEY).startsWith("phx_").contains("bootstrap.print-keys");
        assertThat(Main.personalKey(configured, true)).isEqualTo(KEY);
        assertThat(Main.personalKey(new Bootstrap.Result(1, "phc_x", Optional.empty(), false), false)).contains("stored hashed");
    }
}
