package dev.eddy.flags;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.trends.PropertyFilter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Regex bombs in flag conditions and query filters: classic catastrophic-backtracking shapes, nested counted
 * repetitions and generated pattern soup against hostile texts. Every evaluation answers, and its work is bounded by
 * the compiled program's size, which {@link BoundedRegex} caps. The generated cases come from a seed printed on each
 * run; {@code -Deddy.fuzz.seed=N} replays one.
 */
class BoundedRegexTest {
    private static final Instant NOW = Instant.parse("2026-11-22T12:00:00Z");
    /** 64 kB of the text that makes a backtracking engine explode on {@code (a+)+$}. */
    private static final String HOSTILE = "a".repeat(64 * 1024) + "!";
    private static final List<String> ATOMS = List.of("a", "a+", "a*", ".", ".*", "[a-z]", "\\w", "(a|aa)", "(a+)+", "\\d", "[^!]", "x");
    private static final String SOUP = "a()[]{}|*+?.\\^$,0123456789-";
    private static final int CASES = 1000;

    @Test
    void theClassicReDoSPatternsAnswerAtOnceOnLongText() {
        for (final String bomb : List.of("(a+)+$", "(a|a)+$", "(a|aa)+$", "(.*a){20}", "(x+x+)+y", "^(([a-z])+.)+[A-Z]([a-z])+$")) {
            final long start = System.nanoTime();
            assertThat(BoundedRegex.find(bomb, HOSTILE)).as(bomb).isPresent();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as(bomb).isLessThan(Duration.ofSeconds(2));
        }
        assertThat(BoundedRegex.find("(a+)+$", HOSTILE)).contains(false);
        assertThat(BoundedRegex.find("(a+)+!$", HOSTILE)).contains(true);
    }

    @Test
    void nestedCountedRepetitionsPastRe2sBoundAreRefusedNotCompiled() {
        // RE2/J alone runs out of a 512 MB heap compiling the first, and needs minutes per 100 kB for the second.
        assertThat(BoundedRegex.compile("((a{1000}){1000}){1000}")).isEmpty();
        assertThat(BoundedRegex.compile("(a{1000}){1000}")).isEmpty();
        assertThat(BoundedRegex.compile("(?:(?:a{10}){10}){11}")).isEmpty();
        assertThat(BoundedRegex.compile("[a-z]{1000}[a-z]{1000}".repeat(6))).as("past the program size").isEmpty();
        assertThat(BoundedRegex.compile("x".repeat(10_001))).as("a pattern longer than the program bound").isEmpty();
        // Within the bounds, RE2 semantics as before.
        assertThat(BoundedRegex.find("(?:(?:a{10}){10}){10}", "a".repeat(1000))).contains(true);
        assertThat(BoundedRegex.find("^a{3}$", "aaa")).contains(true);
        assertThat(BoundedRegex.find("^a{2,3}$", "aaaa")).contains(false);
        assertThat(BoundedRegex.find("\\p{Greek}{2}", "αβ")).contains(true);
        assertThat(BoundedRegex.find("[{]{3}", "{{{")).contains(true);
        assertThat(BoundedRegex.find("\\Q{1000}{1000}\\E", "a{1000}{1000}")).contains(true);
        assertThat(BoundedRegex.find("(a", "a")).as("invalid").isEmpty();
    }

    @Test
    void aRefusedPatternMatchesNothingInFlagsAndQueries() {
        final String bomb = "((a{1000}){1000}){1000}";
        assertThat(PropertyMatcher.matches("regex", text(bomb), text("aaa"), NOW)).isFalse();
        assertThat(PropertyMatcher.matches("not_regex", text(bomb), text("aaa"), NOW)).isFalse();
        assertThat(queryMatches("regex", bomb, "aaa")).isFalse();
    }

    /**
     * Any generated pattern is refused (and then matches nothing, either way round), or compiles to a program of at
     * most a small multiple of {@link BoundedRegex#MAX_PROGRAM_SIZE} instructions: RE2's matching steps are at most
     * program size times text length, so that bounds the work of every evaluation. The instruction count is read
     * from RE2/J's compiled program.
     */
    @Test
    void everyGeneratedPatternIsRefusedOrHasABoundedProgram() throws ReflectiveOperationException {
        final long seed = seed();
        final SplittableRandom random = new SplittableRandom(seed);
        final String text = HOSTILE.substring(HOSTILE.length() - 256);
        for (int i = 0; i < CASES; i++) {
            final String pattern = pattern(random);
            final String what = "seed " + seed + " case " + i + ": " + pattern;
            final Optional<com.google.re2j.Pattern> compiled = BoundedRegex.compile(pattern);
            final boolean regex = PropertyMatcher.matches("regex", text(pattern), text(text), NOW);
            final boolean notRegex = PropertyMatcher.matches("not_regex", text(pattern), text(text), NOW);
            final boolean query = queryMatches("regex", pattern, text);
            if (compiled.isEmpty()) {
                assertThat(List.of(regex, notRegex, query)).as(what).containsOnly(false);
            } else {
                assertThat(instructions(compiled.get())).as(what).isLessThanOrEqualTo(3 * BoundedRegex.MAX_PROGRAM_SIZE);
                assertThat(notRegex).as(what).isEqualTo(!regex);
                assertThat(query).as(what).isEqualTo(regex);
            }
        }
    }

    /** The estimate never refuses a pattern shorter than the bound that has no counted repetition. */
    @Test
    void patternsWithoutCountsAreNeverRefusedByTheEstimate() {
        final long seed = seed();
        final SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < CASES; i++) {
            final String pattern = random(random, "ab()|*+?.[]^$\\", 200);
            assertThat(BoundedRegex.withinBounds(pattern)).as("seed " + seed + " case " + i + ": " + pattern).isTrue();
        }
    }

    private static long seed() {
        final long seed = Long.getLong("eddy.fuzz.seed", System.nanoTime());
        System.out.println("BoundedRegexTest seed " + seed + " (replay with -Deddy.fuzz.seed=" + seed + ")");
        return seed;
    }

    /** A catastrophic-backtracking shape, a counted or nested counted repetition, or random pattern characters. */
    private static String pattern(final SplittableRandom random) {
        final String atom = ATOMS.get(random.nextInt(ATOMS.size()));
        final String counted = "(?:" + atom + "){" + random.nextInt(1, 1201) + "}";
        return switch (random.nextInt(4)) {
            case 0 -> {
                final StringBuilder b = new StringBuilder();
                random.ints(random.nextInt(1, 9), 0, ATOMS.size()).forEach(k -> b.append(ATOMS.get(k)));
                yield b + "$";
            }
            case 1 -> counted;
            case 2 -> "(" + counted + "){" + random.nextInt(1, 1201) + "}";
            default -> random(random, SOUP, 40);
        };
    }

    private static String random(final SplittableRandom random, final String alphabet, final int maxLength) {
        final StringBuilder b = new StringBuilder();
        for (int n = random.nextInt(maxLength + 1); n > 0; n--) {
            b.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return b.toString();
    }

    private static int instructions(final com.google.re2j.Pattern pattern) throws ReflectiveOperationException {
        final java.lang.reflect.Field re2 = com.google.re2j.Pattern.class.getDeclaredField("re2");
        re2.setAccessible(true);
        final Object compiled = re2.get(pattern);
        final java.lang.reflect.Field prog = compiled.getClass().getDeclaredField("prog");
        prog.setAccessible(true);
        final Object program = prog.get(compiled);
        final java.lang.reflect.Field size = program.getClass().getDeclaredField("instSize");
        size.setAccessible(true);
        return size.getInt(program);
    }

    private static boolean queryMatches(final String operator, final String pattern, final String value) {
        final ObjectNode filter = JsonNodeFactory.instance.objectNode().put("key", "p").put("operator", operator).put("value", pattern);
        return PropertyFilter.parse(JsonNodeFactory.instance.arrayNode().add(filter)).test(new EventOnly(text(value)), NOW);
    }

    /** Every event property has the value; no person or group has any. */
    private record EventOnly(JsonNode value) implements PropertyFilter.Source {
        @Override
        public JsonNode event(final String key) {
            return value;
        }

        @Override
        public JsonNode person(final String key) {
            return null;
        }

        @Override
        public JsonNode group(final int typeIndex, final String key) {
            return null;
        }
    }

    private static JsonNode text(final String value) {
        return JsonNodeFactory.instance.textNode(value);
    }
}
