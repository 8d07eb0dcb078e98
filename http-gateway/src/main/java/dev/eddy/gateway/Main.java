package dev.eddy.gateway;

import dev.eddy.config.ConfigException;
import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.config.Role;
import java.io.PrintStream;
import dev.eddy.gateway.bootstrap.Bootstrap;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar eddy.jar [all|gateway|streams] [--config FILE]}: loads the configuration, starts Eddy,
 * prints where it listens and which keys to use, and closes it cleanly on SIGTERM/SIGINT.
 */
public final class Main {
    private static final Logger LOG = LoggerFactory.getLogger(Main.class);
    private static final String USAGE = "usage: eddy [all|gateway|streams] [--config FILE] | --help | --version";
    private static final String HELP = USAGE + """


            Starts Eddy, a PostHog-compatible product analytics backend on Kafka Streams.

              all       capture, management API, flags and the Streams topology in one process (the default)
              gateway   the HTTP routes only; queries and flags are answered by the streams instances
              streams   the Streams topology and its stores, answering the gateways' queries

              --config FILE  a HOCON or JSON file over the defaults (also EDDY_CONFIG)
              --help         this text
              --version      Eddy's version

            Every setting is also an environment variable: EDDY_ and the key upper-cased, '.' and '-' as '_'
            (http.port is EDDY_HTTP_PORT). An unknown key or EDDY_ variable is refused, naming the nearest known one.
            """;

    private Main() {
    }

    public static void main(final String[] args) throws Exception {
        if (args.length == 1 && List.of("--help", "-h").contains(args[0])) {
            System.out.print(HELP);
            return;
        }
        if (args.length == 1 && List.of("--version", "-V").contains(args[0])) {
            System.out.println("eddy " + version());
            return;
        }
        final EddyConfig config;
        try {
            config = parse(args);
        } catch (final ConfigException | IllegalArgumentException e) {
            System.err.println("eddy: " + e.getMessage());
            System.err.println(USAGE);
            Runtime.getRuntime().halt(2);
            return;
        }
        final Eddy eddy;
        try {
            eddy = Eddy.start(config);
        } catch (final Exception e) {
            LOG.error("Eddy could not start: {}", e.getMessage(), e);
            Runtime.getRuntime().halt(1);
            return;
        }
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stopping");
            eddy.close();
            stopped.countDown();
        }, "eddy-shutdown"));
        printBanner(System.out, eddy);
        stopped.await();
    }

    static EddyConfig parse(final String[] args) {
        Optional<Role> role = Optional.empty();
        Optional<Path> file = Optional.empty();
        for (int i = 0; i < args.length; i++) {
            if ("--config".equals(args[i]) && i + 1 < args.length) {
                file = Optional.of(Path.of(args[++i]));
            } else if (args[i].startsWith("--config=")) {
                file = Optional.of(Path.of(args[i].substring("--config=".length())));
            } else if (role.isEmpty() && !args[i].startsWith("-")) {
                role = Optional.of(Role.parse(args[i]));
            } else {
                throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
            }
        }
        final EddyConfig loaded = ConfigLoader.load(file);
        return role.map(loaded::withRole).orElse(loaded);
    }

    /**
     * The all-scopes personal key as the banner shows it: whole on the start that stored it (the only time it can be
     * seen: only its hash is kept) or when {@code bootstrap.print-keys} asks; otherwise masked, so a log collecting
     * every start of a server does not collect the key.
     */
    static String personalKey(final Bootstrap.Result b, final boolean printKeys) {
        if (b.personalApiKey().isEmpty()) {
            return "(stored hashed; shown once, when it was created)";
        }
        final String key = b.personalApiKey().get();
        if (b.keyCreated()) {
            return key + "   (shown once: keep it; only its hash is stored)";
        }
        return printKeys ? key : dev.eddy.gateway.auth.ApiKeys.mask(key) + "   (bootstrap.personal-api-key; bootstrap.print-keys=true shows it)";
    }

    /** The version in the jar's manifest, or {@code dev} when run from classes. */
    static String version() {
        final String version = Main.class.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }

    static void printBanner(final PrintStream out, final Eddy eddy) {
        final String host = "0.0.0.0".equals(eddy.config().http().host()) ? "127.0.0.1" : eddy.config().http().host();
        final String base = "http://" + host + ":" + eddy.port();
        out.println();
        out.println("Eddy is running (role " + eddy.config().role().name().toLowerCase(java.util.Locale.ROOT) + ")");
        out.println("  health            " + base + "/_health");
        eddy.bootstrap().ifPresent(b -> {
            out.println("  ingestion         " + base + "   (POST /capture/, /batch/)");
            out.println("  management API    " + base + "/api/projects/");
            out.println("  project id        " + b.projectId());
            out.println("  project API key   " + b.projectToken());
            out.println("  personal API key  " + personalKey(b, eddy.config().bootstrap().printKeys()));
            out.println();
            out.println("Try it:");
            out.println("  curl -s " + base + "/capture/ -d '{\"api_key\":\"" + b.projectToken()
                    + "\",\"event\":\"hello\",\"distinct_id\":\"me\"}'");
            final String key = b.personalApiKey().filter(k -> b.keyCreated() || eddy.config().bootstrap().printKeys()).orElse("$EDDY_PERSONAL_API_KEY");
            out.println("  curl -s -H 'Authorization: Bearer " + key + "' " + base + "/api/projects/" + b.projectId() + "/event_counts/");
        });
        out.println();
        out.flush();
    }
}
