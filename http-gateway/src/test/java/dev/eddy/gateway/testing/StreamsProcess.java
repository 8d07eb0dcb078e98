package dev.eddy.gateway.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@code streams} instance in its own JVM, started from the packaged {@code eddy.jar} as an operator starts one:
 * the same topic prefix (so the same Kafka Streams application) as the test's gateway, its own port and state
 * directory. Its output goes to {@code target/it-logs/}.
 */
public final class StreamsProcess implements AutoCloseable {
    private static final Duration READY = Duration.ofSeconds(120);

    private final String name;
    private final Process process;
    private final int port;
    private final Path log;

    private StreamsProcess(final String name, final Process process, final int port, final Path log) {
        this.name = name;
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** Starts one and waits until it is ready ({@link #launch}, {@link #awaitReady}). */
    public static StreamsProcess start(final String name, final Infrastructure infra, final String topicPrefix, final String secret,
                                       final Path stateDir) throws IOException, InterruptedException {
        return start(name, infra, topicPrefix, secret, stateDir, List.of());
    }

    /** As {@link #start(String, Infrastructure, String, String, Path)}, with more arguments (e.g. {@code --config FILE}). */
    public static StreamsProcess start(final String name, final Infrastructure infra, final String topicPrefix, final String secret,
                                       final Path stateDir, final List<String> args) throws IOException, InterruptedException {
        final StreamsProcess started = launch(name, infra, topicPrefix, secret, stateDir, args);
        try {
            started.awaitReady();
        } catch (final InterruptedException | RuntimeException e) {
            started.close();
            throw e;
        }
        return started;
    }

    /**
     * Starts one without waiting for it: several start at once.
     *
     * @param topicPrefix the gateway's topic prefix
     * @param secret      the deployment's internal secret
     */
    public static StreamsProcess launch(final String name, final Infrastructure infra, final String topicPrefix, final String secret,
                                        final Path stateDir) throws IOException {
        return launch(name, infra, topicPrefix, secret, stateDir, List.of());
    }

    private static StreamsProcess launch(final String name, final Infrastructure infra, final String topicPrefix, final String secret,
                                         final Path stateDir, final List<String> args) throws IOException {
        final String jar = System.getProperty("eddy.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("the packaged eddy.jar is needed (system property eddy.jar, set by the build): " + jar);
        }
        final int port = freePort();
        final Path logs = Path.of(System.getProperty("eddy.it-logs", "target/it-logs"));
        Files.createDirectories(logs);
        final Path log = logs.resolve(name + ".log");
        final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        final List<String> command = new java.util.ArrayList<>(List.of(java.toString(), "-Xmx256m", "-XX:+UseSerialGC", "-jar", jar,
                "streams"));
        command.addAll(args);
        // A restarted process (same name) appends to the same log.
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(Map.of(
                "EDDY_KAFKA_BOOTSTRAP", infra.kafkaBootstrap(),
                "EDDY_KAFKA_TOPIC_PREFIX", topicPrefix,
                "EDDY_PARTITIONS", "4",
                "EDDY_HTTP_HOST", "127.0.0.1",
                "EDDY_HTTP_ADVERTISED_HOST", "127.0.0.1",
                "EDDY_HTTP_PORT", Integer.toString(port),
                "EDDY_HTTP_INTERNAL_SECRET", secret,
                "EDDY_STATE_DIR", stateDir.toString()));
        return new StreamsProcess(name, builder.start(), port, log);
    }

    /** Waits until it is ready (its Kafka Streams instance RUNNING); fails if it exits or takes too long. */
    public void awaitReady() throws InterruptedException {
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        final Instant deadline = Instant.now().plus(READY);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + "; see " + log.toAbsolutePath());
            }
            try {
                final HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/_health/ready"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (ready.statusCode() == 200) {
                    return;
                }
            } catch (final IOException e) {
                // not listening yet
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(name + " not ready within " + READY + "; see " + log.toAbsolutePath());
    }

    /** The address it advertises to the other instances. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** What it has written so far (and what earlier processes of the same name wrote, before it). */
    public String output() throws IOException {
        return Files.readString(log);
    }

    /** Kills it with SIGKILL, as a crash does: no shutdown hook, no leaving the group, no commit. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** Stops it as an operator does (SIGTERM: it leaves the group and tells the gateways) and waits for the exit. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (final InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
