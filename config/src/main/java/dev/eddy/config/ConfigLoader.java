package dev.eddy.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValueFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Loads {@link EddyConfig} from three layers, highest precedence first:
 * environment variables ({@code EDDY_} + key upper-cased, '.' and '-' as '_'), an optional config file
 * (HOCON or JSON, path from {@code EDDY_CONFIG} or {@code --config}), and the defaults shipped in the jar.
 */
public final class ConfigLoader {
    /** The defaults resource inside the jar; also the list of every key an environment variable may set. */
    public static final String DEFAULTS_RESOURCE = "eddy-defaults.conf";
    public static final String ENV_PREFIX = "EDDY_";
    public static final String CONFIG_FILE_ENV = "EDDY_CONFIG";

    private ConfigLoader() {
    }

    /** Loads with the process environment and an optional file path. */
    public static EddyConfig load(final Optional<Path> file) {
        return load(System.getenv(), file);
    }

    public static EddyConfig load(final Map<String, String> env, final Optional<Path> file) {
        final Config defaults = defaults();
        final Optional<Path> path = file.or(() -> Optional.ofNullable(env.get(CONFIG_FILE_ENV))
                .filter(p -> !p.isBlank()).map(Path::of));
        final Config fromFile = path.map(ConfigLoader::parseFile).orElse(ConfigFactory.empty());
        refuseUnknown(defaults, fromFile, env, path);
        final Config unresolved = fromEnvironment(defaults, env)
                .withFallback(fromFile)
                .withFallback(defaults);
        // ${?VARIABLE} substitutions (a file's secrets) read the environment given, not only the process's.
        final Config merged = unresolved.resolveWith(unresolved.withFallback(ConfigValueFactory.fromMap(new HashMap<>(env)).toConfig()),
                ConfigResolveOptions.noSystem());
        try {
            merged.checkValid(defaults);
            return EddyConfig.from(merged);
        } catch (final com.typesafe.config.ConfigException e) {
            throw new ConfigException("invalid configuration: " + e.getMessage(), e);
        }
    }

    /** The environment variable that overrides a key: {@code http.port} is {@code EDDY_HTTP_PORT}. */
    public static String environmentName(final String key) {
        return ENV_PREFIX + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /** Where keys are the user's own: every key below them is passed on as it is. */
    private static final List<String> FREE_FORM = List.of("kafka.client.");
    /**
     * {@code EDDY_} variables that are not configuration: the scripts' own ({@code scripts/}), the logging level
     * ({@code logback.xml}), and those Kubernetes sets for a Service whose name starts with {@code eddy} (service
     * links: {@code EDDY_SERVICE_HOST}, {@code EDDY_GATEWAY_PORT_8000_TCP_ADDR}, ...).
     */
    private static final Pattern NOT_CONFIGURATION = Pattern.compile(
            "EDDY_(CONFIG|DATA|ROOT|LOGS|URL|JAVA_OPTS|IMPORT_JAVA_OPTS|LOG_LEVEL|KAFKA_PORT|KAFKA_CONTROLLER_PORT|KAFKA_SASL|PG_PORT|PG_DB|PG_MODE|PG_ENVFILE"
                    + "|SCALE_BASE_PORT|BENCH_[A-Z0-9_]+|TEST_[A-Z0-9_]+)"
                    + "|EDDY(_[A-Z0-9]+)*_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\\d+_(TCP|UDP|SCTP)(_(ADDR|PORT|PROTO))?)?)");

    /**
     * Refuses what would otherwise be ignored without a word: a key of the file the defaults do not have, and an
     * {@code EDDY_} variable that sets no key, each named with the nearest known one (a typo is the usual cause).
     */
    private static void refuseUnknown(final Config defaults, final Config fromFile, final Map<String, String> env, final Optional<Path> path) {
        final List<String> known = defaults.entrySet().stream().map(Map.Entry::getKey).sorted().toList();
        for (final String key : keys(fromFile.root(), "")) {
            if (!defaults.hasPathOrNull(key) && FREE_FORM.stream().noneMatch(key::startsWith)) {
                throw new ConfigException("config file " + path.map(Path::toString).orElse("") + ": unknown key '" + key + "'"
                        + nearest(key, known).map(n -> " (did you mean '" + n + "'?)").orElse(""));
            }
        }
        final List<String> names = known.stream().map(ConfigLoader::environmentName).toList();
        for (final String name : new TreeSet<>(env.keySet())) {
            if (name.startsWith(ENV_PREFIX) && !names.contains(name) && !NOT_CONFIGURATION.matcher(name).matches()) {
                throw new ConfigException("unknown environment variable " + name + nearest(name, names).map(n -> " (did you mean " + n + "?)").orElse("")
                        + "; every EDDY_ variable of the environment must set a configuration key");
            }
        }
    }

    /**
     * The leaf keys of a file as written, without resolving it (its {@code ${?VARIABLE}} substitutions are resolved
     * later, with the environment); a free-form object ({@code kafka.client}) is one key, not walked into.
     */
    private static List<String> keys(final ConfigObject object, final String prefix) {
        final List<String> keys = new ArrayList<>();
        object.forEach((name, value) -> {
            final String key = prefix + ConfigUtil.joinPath(name);
            if (value instanceof ConfigObject child && FREE_FORM.stream().noneMatch((key + ".")::startsWith)) {
                keys.addAll(keys(child, key + "."));
            } else {
                keys.add(key);
            }
        });
        return keys;
    }

    /** The candidate closest to {@code name} by edit distance, if one is close enough to be a likely typo. */
    static Optional<String> nearest(final String name, final List<String> candidates) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (final String candidate : candidates) {
            final int d = distance(name, candidate);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, name.length() / 3) ? Optional.of(best) : Optional.empty();
    }

    /** Levenshtein's edit distance. */
    private static int distance(final String a, final String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                final int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    static Config defaults() {
        final Config defaults = ConfigFactory.parseResources(ConfigLoader.class.getClassLoader(), DEFAULTS_RESOURCE,
                ConfigParseOptions.defaults().setAllowMissing(false));
        return defaults.resolve();
    }

    private static Config parseFile(final Path path) {
        if (!Files.isReadable(path)) {
            throw new ConfigException("config file " + path + " does not exist or cannot be read");
        }
        try {
            return ConfigFactory.parseFile(path.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
        } catch (final com.typesafe.config.ConfigException e) {
            throw new ConfigException("config file " + path + ": " + e.getMessage(), e);
        }
    }

    /** Every leaf key of the defaults whose environment variable is set becomes an override. */
    private static Config fromEnvironment(final Config defaults, final Map<String, String> env) {
        final Map<String, Object> overrides = new HashMap<>();
        defaults.entrySet().forEach(entry -> {
            final String value = env.get(environmentName(entry.getKey()));
            if (value != null) {
                overrides.put(entry.getKey(), value);
            }
        });
        Config config = ConfigFactory.empty();
        for (final Map.Entry<String, Object> e : overrides.entrySet()) {
            // A string override still reads as a number or boolean: Typesafe Config converts on access.
            config = config.withValue(e.getKey(), ConfigValueFactory.fromAnyRef(e.getValue(), "environment " + environmentName(e.getKey())));
        }
        return config;
    }
}
