package dev.eddy.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the soak's acknowledged events must add up to in Eddy, person by person. Person {@code p} sends under its
 * own distinct id ({@link #MAIN}), and, when it starts anonymous, first under an anonymous id ({@link #ANONYMOUS})
 * until an {@code $identify} from its own id ({@link #IDENTIFY}, which counts as a main-id event too) names the
 * anonymous id. Only acknowledged events (answered 200) are recorded, so a refused request leaves no trace: a person
 * whose {@code $identify} was refused stays two persons in Eddy (its anonymous events under nobody's properties).
 * Safe to record into from several threads.
 */
final class SoakLedger {
    static final int ANONYMOUS = 0;
    static final int MAIN = 1;
    static final int IDENTIFY = 2;

    private final AtomicIntegerArray anonymous;
    private final AtomicIntegerArray main;
    private final AtomicIntegerArray identified;
    private final AtomicLong total = new AtomicLong();

    SoakLedger(final int persons) {
        anonymous = new AtomicIntegerArray(persons);
        main = new AtomicIntegerArray(persons);
        identified = new AtomicIntegerArray(persons);
    }

    int persons() {
        return main.length();
    }

    /** One acknowledged event of {@code person} of {@code kind} ({@link #ANONYMOUS}, {@link #MAIN}, {@link #IDENTIFY}). */
    void acked(final int person, final int kind) {
        switch (kind) {
            case ANONYMOUS -> anonymous.incrementAndGet(person);
            case MAIN -> main.incrementAndGet(person);
            case IDENTIFY -> {
                main.incrementAndGet(person);
                identified.set(person, 1);
            }
            default -> throw new IllegalArgumentException("unknown kind " + kind);
        }
        total.incrementAndGet();
    }

    long total() {
        return total.get();
    }

    /** Whether {@code person}'s {@code $identify} was acknowledged (its two ids are one person). */
    boolean identified(final int person) {
        return identified.get(person) == 1;
    }

    /** Acknowledged events under {@code person}'s own id. */
    int mainEvents(final int person) {
        return main.get(person);
    }

    /** The persons Eddy must know: one per identified person, else one per id that has an acknowledged event. */
    long expectedPersons() {
        long n = 0;
        for (int p = 0; p < persons(); p++) {
            n += identified(p) ? 1 : (anonymous.get(p) > 0 ? 1 : 0) + (main.get(p) > 0 ? 1 : 0);
        }
        return n;
    }

    /**
     * The events each person's profile must count, by the person property naming it ({@code name(p)}): its own id's
     * events, and its anonymous ones once identified. Persons without events are left out.
     */
    Map<String, Long> expectedByPerson(final java.util.function.IntFunction<String> name) {
        final Map<String, Long> expected = new TreeMap<>();
        for (int p = 0; p < persons(); p++) {
            final long n = main.get(p) + (identified(p) ? anonymous.get(p) : 0L);
            if (n > 0) {
                expected.put(name.apply(p), n);
            }
        }
        return expected;
    }

    /** Events only under anonymous ids that were never identified: counted under no person's property. */
    long expectedUnattributed() {
        long n = 0;
        for (int p = 0; p < persons(); p++) {
            n += identified(p) ? 0 : anonymous.get(p);
        }
        return n;
    }

    /**
     * The differences between the expected counts per person and Eddy's ({@code actual}, with values Eddy had that
     * are not expected as well), at most {@code limit} of them described, then how many more; empty when equal.
     */
    static List<String> differences(final Map<String, Long> expected, final Map<String, Long> actual, final int limit) {
        final List<String> out = new ArrayList<>();
        int more = 0;
        final Map<String, Long> all = new TreeMap<>(expected);
        actual.keySet().forEach(k -> all.putIfAbsent(k, 0L));
        for (final String key : all.keySet()) {
            final long want = expected.getOrDefault(key, 0L);
            final long got = actual.getOrDefault(key, 0L);
            if (want != got) {
                if (out.size() < limit) {
                    out.add(String.format(Locale.ROOT, "%s: Eddy %d, acked %d", key, got, want));
                } else {
                    more++;
                }
            }
        }
        if (more > 0) {
            out.add(more + " more");
        }
        return out;
    }
}
