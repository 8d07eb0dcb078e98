package dev.eddy.gateway;

import dev.eddy.config.ConfigException;
import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.config.Role;
import java.io.PrintStream;
import java.nio.file.Path;
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
    private static final String USAGE = "usage: eddy [all|gateway|streams] [--config FILE]";

    private Main() {
    }

    public static void main(final String[] args) throws Exception {
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
            out.println("  personal API key  " + b.personalApiKey().orElse(
                    "(stored hashed; set EDDY_BOOTSTRAP_PERSONAL_API_KEY to fix one you can see)"));
            out.println();
            out.println("Try it:");
            out.println("  curl -s " + base + "/capture/ -d '{\"api_key\":\"" + b.projectToken()
                    + "\",\"event\":\"hello\",\"distinct_id\":\"me\"}'");
            b.personalApiKey().ifPresent(k -> out.println("  curl -s -H 'Authorization: Bearer " + k + "' " + base
                    + "/api/projects/" + b.projectId() + "/event_counts/"));
        });
        out.println();
        out.flush();
    }
}
