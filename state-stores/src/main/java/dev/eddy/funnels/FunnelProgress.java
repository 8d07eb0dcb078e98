package dev.eddy.funnels;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.StoredBlocks;
import dev.eddy.trends.PropertyLookup;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;

/**
 * One funnel's progress per person over one partition's sealed event blocks, kept between queries of the same
 * {@link FunnelQuery#progressShape shape} so that a funnel asked again (a dashboard tile) evaluates only the persons
 * whose events changed: PostHog's "per-person progress recomputed from that person's own events when they change".
 *
 * <p>Kept: the sealed blocks it was built from (each block's id and deleted rows: a block's content), which persons have
 * funnel rows in which block, and each person's {@link Contribution} to the answer from its sealed rows alone. A read
 * compares the partition's sealed blocks with those: persons with rows in a block added, removed or changed (rows
 * deleted by a merge or by expiry) are evaluated again from all their sealed rows. Persons with rows in the tail of
 * the block being filled (stored one by one, which change all the time) are evaluated from all their rows, and that
 * contribution kept apart with the uuids of their tail rows: asked again with the same tail rows and nothing else of
 * theirs changed, they add it as it was. Every other person adds its kept contribution. So the answer equals a fresh evaluation of every person by construction;
 * a read that fails part way (a block removed under it, the query cancelled) forgets everything, and the next builds
 * again from nothing.
 *
 * <p>Not thread-safe on its own: {@link #read} holds the instance's lock.
 */
public final class FunnelProgress {
    /**
     * Rows of the partition that do not change once written, as a read found them: a sealed block, or a part of the
     * block being filled.
     *
     * @param number  the unit's place among the partition's units (a block's, or its part's)
     * @param content what names the rows: a sealed block's id, or a part's bytes
     * @param deleted the rows not stored any more; not changed afterwards
     * @param rows    the rows, read when needed (null once gone)
     */
    public record Unit(long number, Object content, BitSet deleted, Supplier<EventBlock> rows) {
        /** Whether this is a sealed block (not a part of one being filled). */
        public boolean isSealed() {
            return (number & 31) == 0;
        }

        /** Sealed block {@code block} of a project, read from {@code source}. */
        public static Unit sealed(final long projectId, final long block, final BlockKeys.Sealed entry, final BitSet deleted,
                                  final StoredBlocks.Sealed source) {
            return new Unit(block << 5, entry.id(), deleted, () -> source.block(projectId, block, entry));
        }

        /** Part {@code part} of block {@code block} being filled, as stored ({@link EventBlock#encode}). */
        public static Unit part(final long block, final int part, final byte[] encoded, final BitSet deleted) {
            if (part < 0 || part >= 31) {
                throw new IllegalArgumentException("part " + part + " of a block");
            }
            final EventBlock[] decoded = new EventBlock[1];
            return new Unit(block << 5 | (part + 1), Bytes.wrap(encoded), deleted, () -> {
                if (decoded[0] == null) {
                    decoded[0] = EventBlock.decode(encoded);
                }
                return decoded[0];
            });
        }
    }

    /** The tail of a block being filled (rows stored one by one), with its rows not stored any more. */
    public record UnsealedBlock(EventBlock block, BitSet deleted) {
    }

    private record Applied(Object content, BitSet deleted) {
    }

    /** A person's rows being filled ({@link #tailRows}) and its contribution with them (null: it adds nothing). */
    private record Tailed(long[] rows, Contribution contribution) {
    }

    /**
     * What one person adds to a funnel's partial: its outcome under each breakdown value, or (funnel trends) the
     * cells of the periods it entered and converted in.
     */
    static final class Contribution {
        /** Per outcome, the breakdown value it is under ({@code []} without a breakdown). */
        private final List<String>[] values;
        private final FunnelOutcome[] outcomes;
        /** Per breakdown value of a funnel trend, the cells of its period counts this person adds one to. */
        private final List<String>[] periodValues;
        private final int[][] periodCells;

        @SuppressWarnings("unchecked")
        private Contribution(final FunnelQuery.Partial own) {
            final List<List<String>> valueList = new ArrayList<>();
            final List<FunnelOutcome> outcomeList = new ArrayList<>();
            own.outcomes.forEach((value, list) -> list.forEach(o -> {
                valueList.add(value);
                outcomeList.add(o);
            }));
            values = valueList.toArray(List[]::new);
            outcomes = outcomeList.toArray(FunnelOutcome[]::new);
            periodValues = own.periods.keySet().toArray(List[]::new);
            periodCells = new int[periodValues.length][];
            for (int i = 0; i < periodValues.length; i++) {
                final long[] counts = own.periods.get(periodValues[i]);
                periodCells[i] = java.util.stream.IntStream.range(0, counts.length)
                        .flatMap(c -> java.util.stream.IntStream.range(0, (int) counts[c]).map(k -> c)).toArray();
            }
        }

        /** What {@code own} (one person's evaluation) holds; null when it adds nothing. */
        static Contribution of(final FunnelQuery.Partial own) {
            return own.outcomes.isEmpty() && own.periods.isEmpty() ? null : new Contribution(own);
        }

        void addTo(final FunnelQuery.Partial into, final int periodCount) {
            for (int i = 0; i < values.length; i++) {
                into.outcomes.computeIfAbsent(values[i], v -> new ArrayList<>()).add(outcomes[i]);
            }
            for (int i = 0; i < periodValues.length; i++) {
                final long[] counts = into.periods.computeIfAbsent(periodValues[i], v -> new long[periodCount]);
                for (final int cell : periodCells[i]) {
                    counts[cell]++;
                }
            }
        }

        long memoryBytes() {
            long bytes = 64 + 8L * values.length + 8L * periodValues.length;
            for (final FunnelOutcome o : outcomes) {
                bytes += 48 + 8L * o.timings().length;
            }
            for (final int[] cells : periodCells) {
                bytes += 16 + 4L * cells.length;
            }
            return bytes;
        }
    }

    private final Map<Long, Applied> blocks = new HashMap<>();
    /** Per block, the persons with funnel rows in it. */
    private final Map<Long, UUID[]> personsOf = new HashMap<>();
    /** Per person, its funnel rows: each the unit's number shifted by {@link #ROW_BITS}, or'ed with the row. */
    private final Map<UUID, long[]> rowsOf = new HashMap<>();
    /** Bits of a row number in an entry of {@link #rowsOf} (a block has at most 4,096 rows). */
    private static final int ROW_BITS = 13;
    private final Map<UUID, Contribution> contributions = new HashMap<>();
    /** Per person with rows being filled at the last read: those rows' uuids, and its contribution with them. */
    private final Map<UUID, Tailed> tailed = new HashMap<>();
    private long baseWeight;
    private long weight;
    private int evaluatedLastRead;

    /**
     * Adds the funnel's answer over a partition's rows of a project to {@code into}: every person's, as
     * {@link FunnelQuery.BlockRowsCollector} would evaluate it from all the blocks, from what is kept where nothing
     * changed.
     *
     * @param query    a funnel of this progress's shape
     * @param sealed   the partition's sealed blocks whose span meets the query's range and parts of blocks being
     *                 filled, by number
     * @param unsealed the tail rows of blocks being filled
     * @param check    called between blocks: throws to stop the read (a cancelled query)
     */
    public synchronized void read(final FunnelQuery query, final List<Unit> sealed, final List<UnsealedBlock> unsealed,
                                  final PropertyLookup properties, final Instant now, final Runnable check, final FunnelQuery.Partial into) {
        try {
            apply(query, sealed, unsealed, properties, now, check, into);
        } catch (final RuntimeException | Error e) {
            forget();
            throw e;
        }
    }

    private void apply(final FunnelQuery query, final List<Unit> sealed, final List<UnsealedBlock> unsealed, final PropertyLookup properties,
                       final Instant now, final Runnable check, final FunnelQuery.Partial into) {
        // Persons with rows being filled (the tail), and which: their events' uuids, in row order.
        final Map<UUID, long[]> tailOf = tailRows(query, unsealed, properties, now, check);

        // Blocks added, removed or changed since the last read; the persons they had rows of.
        final Map<Long, Unit> current = new HashMap<>();
        sealed.forEach(b -> current.put(b.number(), b));
        final Set<Long> gone = new TreeSet<>();
        final List<Unit> fresh = new ArrayList<>();
        for (final Map.Entry<Long, Applied> kept : blocks.entrySet()) {
            final Unit found = current.get(kept.getKey());
            if (found == null || !found.content().equals(kept.getValue().content()) || !found.deleted().equals(kept.getValue().deleted())) {
                gone.add(kept.getKey());
            }
        }
        for (final Unit b : sealed) {
            if (!blocks.containsKey(b.number()) || gone.contains(b.number())) {
                fresh.add(b);
            }
        }
        final Set<UUID> changed = new HashSet<>();
        for (final long number : gone) {
            changed.addAll(Arrays.asList(personsOf.getOrDefault(number, new UUID[0])));
        }

        // Their new content: every person with rows there changes.
        final FunnelQuery.BlockRowsCollector again = query.collector(properties, now);
        final Map<Long, Map<UUID, long[]>> freshRows = new HashMap<>();
        final List<EventBlock> freshBlocks = new ArrayList<>();
        for (final Unit b : fresh) {
            check.run();
            final EventBlock block = load(b);
            again.add(block, b.deleted());
            freshRows.put(b.number(), rowsByPerson(again, b.number()));
            changed.addAll(freshRows.get(b.number()).keySet());
            freshBlocks.add(block);
        }
        again.only(changed);

        // Persons with tail rows evaluated again for this read: those whose tail rows or other rows changed since the
        // last read; the others add what they added then.
        final Set<UUID> moving = new HashSet<>();
        tailOf.forEach((person, rows) -> {
            final Tailed had = tailed.get(person);
            if (had == null || changed.contains(person) || !Arrays.equals(had.rows(), rows)) {
                moving.add(person);
            }
        });
        final FunnelQuery.BlockRowsCollector filling = query.collector(properties, now);
        filling.only(moving);
        if (!moving.isEmpty()) {
            for (final UnsealedBlock block : unsealed) {
                filling.add(block.block(), block.deleted());
            }
            for (int i = 0; i < fresh.size(); i++) {
                filling.add(freshBlocks.get(i), fresh.get(i).deleted());
            }
        }

        // The rest of the rows of the persons evaluated, from the units that did not change: just those rows.
        final Map<Long, IntList> againRows = new TreeMap<>();
        final Map<Long, IntList> fillingRows = new TreeMap<>();
        collect(changed, gone, current, againRows);
        collect(moving, gone, current, fillingRows);
        final Set<Long> rest = new TreeSet<>(againRows.keySet());
        rest.addAll(fillingRows.keySet());
        for (final long number : rest) {
            check.run();
            final Unit b = current.get(number);
            final EventBlock block = load(b);
            if (againRows.containsKey(number)) {
                again.add(block, b.deleted(), againRows.get(number).sorted());
            }
            if (fillingRows.containsKey(number)) {
                filling.add(block, b.deleted(), fillingRows.get(number).sorted());
            }
        }

        // Kept from now on: the units as they are, whose rows are where, and the changed persons' contributions.
        for (final long number : gone) {
            unindex(number);
        }
        for (final Unit b : fresh) {
            blocks.put(b.number(), new Applied(b.content(), b.deleted()));
            final Map<UUID, long[]> byPerson = freshRows.get(b.number());
            personsOf.put(b.number(), byPerson.keySet().toArray(UUID[]::new));
            byPerson.forEach((person, rows) -> {
                final long[] had = rowsOf.getOrDefault(person, new long[0]);
                final long[] has = Arrays.copyOf(had, had.length + rows.length);
                System.arraycopy(rows, 0, has, had.length, rows.length);
                rowsOf.put(person, has);
            });
        }
        for (final UUID person : changed) {
            contributions.remove(person);
        }
        again.finishEach((actor, events) -> {
            final Contribution c = query.contribution(events);
            if (c != null) {
                contributions.put((UUID) actor, c);
            }
        });
        tailed.keySet().retainAll(tailOf.keySet());
        filling.finishEach((actor, events) -> tailed.put((UUID) actor, new Tailed(tailOf.get(actor), query.contribution(events))));
        // A person moving whose rows the funnel takes none of (all outside its steps) adds nothing.
        for (final UUID person : moving) {
            tailed.putIfAbsent(person, new Tailed(tailOf.get(person), null));
        }
        check.run();

        final int periodCount = query.periodCells();
        // Every person's part: with tail rows as evaluated with them, else as kept.
        for (final Map.Entry<UUID, Contribution> kept : contributions.entrySet()) {
            if (!tailOf.containsKey(kept.getKey())) {
                kept.getValue().addTo(into, periodCount);
            }
        }
        for (final Tailed t : tailed.values()) {
            if (t.contribution() != null) {
                t.contribution().addTo(into, periodCount);
            }
        }
        evaluatedLastRead = changed.size() + moving.size();
        if (!gone.isEmpty() || !fresh.isEmpty() || baseWeight == 0) {
            baseWeight = weighUnits();
        }
        weight = baseWeight + weighTails();
    }

    /**
     * Per person with rows being filled that the funnel takes, those rows' event uuids in row order (two longs each):
     * the same uuids are the same rows, so the person's part with them is as it was.
     */
    private static Map<UUID, long[]> tailRows(final FunnelQuery query, final List<UnsealedBlock> unsealed, final PropertyLookup properties,
                                              final Instant now, final Runnable check) {
        final FunnelQuery.BlockRowsCollector probe = query.collector(properties, now);
        final Map<UUID, long[]> tailOf = new HashMap<>();
        for (final UnsealedBlock block : unsealed) {
            check.run();
            probe.add(block.block(), block.deleted());
            final FunnelQuery.RowsTaken taken = probe.lastBlockRows();
            for (int i = 0; i < taken.size(); i++) {
                final UUID event = block.block().uuid(taken.row(i));
                tailOf.merge((UUID) probe.actorKey(taken.actor(i)), new long[] {event.getMostSignificantBits(), event.getLeastSignificantBits()},
                        (had, more) -> {
                            final long[] both = Arrays.copyOf(had, had.length + 2);
                            both[had.length] = more[0];
                            both[had.length + 1] = more[1];
                            return both;
                        });
            }
        }
        return tailOf;
    }

    /** The rows {@code collector}'s last add took from unit {@code number}, per person, as {@link #rowsOf} entries. */
    private static Map<UUID, long[]> rowsByPerson(final FunnelQuery.BlockRowsCollector collector, final long number) {
        final Map<UUID, IntList> rows = new HashMap<>();
        final FunnelQuery.RowsTaken taken = collector.lastBlockRows();
        for (int i = 0; i < taken.size(); i++) {
            rows.computeIfAbsent((UUID) collector.actorKey(taken.actor(i)), p -> new IntList()).add(taken.row(i));
        }
        final Map<UUID, long[]> entries = new HashMap<>();
        rows.forEach((person, list) -> entries.put(person, Arrays.stream(list.sorted()).mapToLong(r -> number << ROW_BITS | r).toArray()));
        return entries;
    }

    /** The rows of {@code persons} in units still there and unchanged, per unit. */
    private void collect(final Set<UUID> persons, final Set<Long> gone, final Map<Long, Unit> current, final Map<Long, IntList> into) {
        for (final UUID person : persons) {
            for (final long entry : rowsOf.getOrDefault(person, new long[0])) {
                final long number = entry >>> ROW_BITS;
                if (!gone.contains(number) && current.containsKey(number)) {
                    into.computeIfAbsent(number, n -> new IntList()).add((int) (entry & ((1 << ROW_BITS) - 1)));
                }
            }
        }
    }

    /** A growable list of ints. */
    private static final class IntList {
        private int[] values = new int[8];
        private int size;

        void add(final int value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
        }

        int[] sorted() {
            final int[] out = Arrays.copyOf(values, size);
            Arrays.sort(out);
            return out;
        }
    }

    private static EventBlock load(final Unit unit) {
        final EventBlock block = unit.rows().get();
        if (block == null) {
            throw new EventBlock.Gone("block " + (unit.number() >> 5) + " was removed while a funnel read it");
        }
        return block;
    }

    private void unindex(final long number) {
        blocks.remove(number);
        final UUID[] persons = personsOf.remove(number);
        if (persons == null) {
            return;
        }
        for (final UUID person : persons) {
            final long[] had = rowsOf.get(person);
            final long[] has = Arrays.stream(had).filter(entry -> entry >>> ROW_BITS != number).toArray();
            if (has.length == 0) {
                rowsOf.remove(person);
            } else {
                rowsOf.put(person, has);
            }
        }
    }

    private void forget() {
        blocks.clear();
        personsOf.clear();
        rowsOf.clear();
        contributions.clear();
        tailed.clear();
        baseWeight = 0;
        weight = 0;
    }

    /** What the units' index and the kept contributions take (weighed when the units change). */
    private long weighUnits() {
        long bytes = 256;
        for (final Applied applied : blocks.values()) {
            bytes += 96 + (applied.content() instanceof Bytes encoded ? encoded.get().length : 0);
        }
        for (final UUID[] persons : personsOf.values()) {
            bytes += 48 + 8L * persons.length;
        }
        for (final long[] numbers : rowsOf.values()) {
            bytes += 120 + 8L * numbers.length;
        }
        for (final Contribution c : contributions.values()) {
            bytes += 48 + c.memoryBytes();
        }
        return bytes;
    }

    /** What the contributions with tail rows take (a few hundred persons a partition at most). */
    private long weighTails() {
        long bytes = 0;
        for (final Tailed t : tailed.values()) {
            bytes += 96 + 8L * t.rows().length + (t.contribution() == null ? 0 : t.contribution().memoryBytes());
        }
        return bytes;
    }

    /** About what this progress takes on the heap, as of its last read. */
    public synchronized long memoryBytes() {
        return weight;
    }

    /** How many persons the last read evaluated (rows changed, or rows being filled changed), for tests. */
    synchronized int evaluatedLastRead() {
        return evaluatedLastRead;
    }

    /** The persons with a contribution kept (for tests and metrics). */
    synchronized int persons() {
        return contributions.size();
    }
}
