package dev.eddy.gateway.importer;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code eddy import FILE [--host URL] [--token phc_...] [--personal-key phx_...] [--state FILE] [--batch-size N]
 * [--restart] [--wait-seconds N] [--give-up-minutes N]}: imports a PostHog export into a project (see
 * {@link ExportReader} for the formats, {@link Importer} for how), with a progress line and a summary. The token and
 * personal key default to this machine's Eddy keys ({@code EDDY_BOOTSTRAP_PROJECT_TOKEN},
 * {@code EDDY_BOOTSTRAP_PERSONAL_API_KEY}); without a personal key the import runs without watching the events
 * become visible. Exit status: 0 done, 1 failed (the checkpoint kept), 2 bad arguments, 130 interrupted.
 */
public final class ImportCommand {
    static final String USAGE = """
            usage: import FILE [--host URL] [--token PROJECT_API_KEY] [--personal-key PERSONAL_API_KEY]
                              [--state FILE] [--batch-size N] [--restart] [--wait-seconds N] [--give-up-minutes N]
              FILE   a PostHog export: JSON Lines (.jsonl, .ndjson, .json) or CSV (.csv), optionally gzipped (.gz)""";

    private ImportCommand() {
    }

    public static void main(final String[] args) throws InterruptedException {
        final Importer.Options options;
        try {
            options = options(args, System.getenv());
        } catch (final IllegalArgumentException e) {
            System.err.println("import: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        final Importer importer = new Importer(options, System.out);
        final Thread main = Thread.currentThread();
        final Thread hook = new Thread(() -> {
            importer.stop();
            try {
                main.join(Duration.ofSeconds(150).toMillis());
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "import-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        int status;
        try {
            final Importer.Summary summary = importer.run();
            print(System.out, options, summary, importer);
            status = summary.interrupted() ? 130 : 0;
        } catch (final Importer.ImportException e) {
            System.out.println();
            System.err.println("import: " + e.getMessage());
            status = 1;
        } catch (final java.io.IOException e) {
            System.out.println();
            System.err.println("import: " + e);
            status = 1;
        }
        if (!importer.stopRequested()) {
            Runtime.getRuntime().removeShutdownHook(hook);
            System.exit(status);
        }
    }

    private static String value(final String[] args, final int i, final String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static int positive(final String value, final String option) {
        try {
            final int n = Integer.parseInt(value);
            if (n > 0) {
                return n;
            }
        } catch (final NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(option + " must be a positive whole number, not '" + value + "'");
    }

    static Importer.Options options(final String[] args, final Map<String, String> env) {
        Path file = null;
        URI host = URI.create(env.getOrDefault("EDDY_HOST", "http://127.0.0.1:" + env.getOrDefault("EDDY_HTTP_PORT", "8000")));
        String token = env.get("EDDY_BOOTSTRAP_PROJECT_TOKEN");
        String personalKey = env.get("EDDY_BOOTSTRAP_PERSONAL_API_KEY");
        Path state = null;
        int batchSize = 2000;
        boolean restart = false;
        Duration wait = Duration.ofSeconds(120);
        Duration giveUp = Duration.ofMinutes(10);
        for (int i = 0; i < args.length; i++) {
            final String arg = args[i];
            switch (arg) {
                case "--host" -> host = URI.create(value(args, ++i, arg));
                case "--token" -> token = value(args, ++i, arg);
                case "--personal-key" -> personalKey = value(args, ++i, arg);
                case "--state" -> state = Path.of(value(args, ++i, arg));
                case "--batch-size" -> batchSize = positive(value(args, ++i, arg), arg);
                case "--wait-seconds" -> wait = Duration.ofSeconds(positive(value(args, ++i, arg), arg));
                case "--give-up-minutes" -> giveUp = Duration.ofMinutes(positive(value(args, ++i, arg), arg));
                case "--restart" -> restart = true;
                default -> {
                    if (arg.startsWith("-") || file != null) {
                        throw new IllegalArgumentException("unexpected argument '" + arg + "'");
                    }
                    file = Path.of(arg);
                }
            }
        }
        if (file == null) {
            throw new IllegalArgumentException("no FILE given");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(file + " is not a readable file");
        }
        ExportReader.Format.of(file);
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("no project API key: pass --token or set EDDY_BOOTSTRAP_PROJECT_TOKEN");
        }
        if (!"http".equals(host.getScheme()) && !"https".equals(host.getScheme())) {
            throw new IllegalArgumentException("--host must be an http:// or https:// URL");
        }
        final Optional<String> personal = Optional.ofNullable(personalKey).filter(k -> !k.isBlank());
        final URI eddy = host;
        final String projectKey = token;
        return new Importer.Options(file, host, token, personal, personal.flatMap(k -> projectOf(eddy, k, projectKey)),
                state != null ? state : file.resolveSibling(file.getFileName() + ".import.json"), batchSize, restart, giveUp, wait);
    }

    /** The id of the project whose API key is {@code token}, as the personal key sees the projects. */
    private static Optional<Long> projectOf(final URI host, final String personalKey, final String token) {
        try {
            final HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(host.resolve("/api/projects/"))
                            .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + personalKey).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return Optional.empty();
            }
            for (final JsonNode project : Json.mapper().readTree(response.body()).path("results")) {
                if (token.equals(project.path("api_token").asText())) {
                    return Optional.of(project.path("id").asLong());
                }
            }
            return Optional.empty();
        } catch (final java.io.IOException e) {
            return Optional.empty();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    static void print(final PrintStream out, final Importer.Options options, final Importer.Summary s, final Importer importer) {
        out.printf(Locale.ROOT, "import of %s into %s: %s%n", options.file(), options.host(),
                s.interrupted() ? "interrupted; run the same command again to resume" : "done");
        out.printf(Locale.ROOT, "  records     %,d acknowledged%s%n", s.records(),
                s.resumedAfter() > 0 ? String.format(Locale.ROOT, " (this run resumed after %,d)", s.resumedAfter()) : "");
        out.printf(Locale.ROOT, "  imported    %,d events in %s: %,.0f events/s%n", s.imported(), Progress.duration(s.sending()),
                s.imported() / Math.max(s.sending().toMillis() / 1000.0, 1e-3));
        if (s.rejected() > 0) {
            out.printf(Locale.ROOT, "  rejected    %,d %s, each with its line and reason in %s%n", s.rejected(),
                    importer.rejectedByReason(), importer.rejectsFile());
        }
        if (options.personalKey().isPresent() && options.projectId().isPresent()) {
            out.printf(Locale.ROOT, "  processed   %,d visible in Eddy's counts %s after the start: %,.0f events/s end to end%s%n",
                    s.visible(), Progress.duration(s.total()), s.visible() / Math.max(s.total().toMillis() / 1000.0, 1e-3),
                    s.visible() < s.imported() ? String.format(Locale.ROOT, " (%,d not: events Eddy already had, dropped by "
                            + "PostHog's rules, or still on their way)", s.imported() - s.visible()) : "");
        } else {
            out.println("  processed   not watched (no personal API key with access to the project)");
        }
        out.printf(Locale.ROOT, "  checkpoint  %s%n", options.state());
    }
}
