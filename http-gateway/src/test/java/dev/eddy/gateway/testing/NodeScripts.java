package dev.eddy.gateway.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the JavaScript the SDK and browser tests drive ({@code src/test/js}, whose npm project the build installs before
 * the integration tests) with the machine's node. Never skips: without node, or when the build did not install the
 * project, the test fails saying so. A script's output (both streams) is kept under {@code target/artifacts/} and
 * printed.
 */
public final class NodeScripts {
    public static final Path DIR = Path.of(System.getProperty("user.dir"), "src", "test", "js");
    private static final Path ARTIFACTS = Path.of(System.getProperty("user.dir"), "target", "artifacts");

    private NodeScripts() {
    }

    /**
     * What a script did.
     *
     * @param exitCode its exit code, or -1 when it was stopped at the timeout
     * @param output   both streams
     */
    public record Run(int exitCode, String output) {
        /** The last line that is a JSON object: the scripts end with their summary. */
        public JsonNode summary() {
            final String last = output.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b)
                    .orElseThrow(() -> new AssertionError("the script printed no JSON summary:\n" + output));
            try {
                return Json.mapper().readTree(last);
            } catch (final IOException e) {
                throw new AssertionError("the script's summary is not JSON: " + last, e);
            }
        }
    }

    /** Runs {@code node script args...} in {@link #DIR} with {@code env} added, for at most {@code timeout}. */
    public static Run run(final String script, final List<String> args, final Map<String, String> env, final Duration timeout)
            throws IOException, InterruptedException {
        if (!Files.isDirectory(DIR.resolve("node_modules"))) {
            throw new AssertionError(DIR + "/node_modules is missing: the build's test-js-install step (npm ci) installs it "
                    + "before the integration tests; run them through Maven (./scripts/test)");
        }
        Files.createDirectories(ARTIFACTS);
        final Path log = ARTIFACTS.resolve(script.replaceAll("[.]mjs$", "") + "-" + System.nanoTime() + ".log");
        final List<String> command = new ArrayList<>(List.of("node", script));
        command.addAll(args);
        final ProcessBuilder builder = new ProcessBuilder(command).directory(DIR.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().putAll(env);
        final Process process;
        try {
            process = builder.start();
        } catch (final IOException e) {
            throw new AssertionError("node is needed to run " + script + " (Debian: apt-get install nodejs npm)", e);
        }
        final boolean finished = process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS);
        if (!finished) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        final String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println(script + " (" + log + "):\n" + output);
        return new Run(finished ? process.exitValue() : -1, output);
    }
}
