package dev.eddy.benchmarks;

import java.util.HashMap;
import java.util.Map;

/** The {@code --name value} arguments every benchmark program takes. */
final class BenchArgs {
    private BenchArgs() {
    }

    /** The arguments by name (without the dashes); exits with status 2 when a required one is missing. */
    static Map<String, String> parse(final String[] argv, final String... required) {
        final Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            args.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        }
        for (final String name : required) {
            if (!args.containsKey(name)) {
                System.err.println("missing --" + name);
                System.exit(2);
            }
        }
        return args;
    }
}
