package dev.eddy.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValueFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

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
        final Config merged = fromEnvironment(defaults, env)
                .withFallback(fromFile)
                .withFallback(defaults)
                .resolve();
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
