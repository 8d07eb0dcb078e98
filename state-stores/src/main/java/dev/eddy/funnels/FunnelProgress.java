package dev.eddy.funnels;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.PartBytes;
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

/**
 * One funnel's progress per person over one partition's sealed event blocks, kept between queries of the same
 * {@link FunnelQuery#progressShape shape} so that a funnel asked again (a dashboard tile) evaluates only the persons
 * whose events changed: PostHog's "per-person progress recomputed from that person's own events when they change".
 *
 * <p>Kept: the units it was built from (sealed blocks by id, parts of a block being filled by their bytes, each with its
 * deleted rows: a unit's content), which persons have funnel rows in which unit, each person's {@link Contribution}
 * to the answer from those rows, and (an ordered or strict funnel without breakdown) each person's evaluation as it
 * stands after them ({@link OrderedFunnel.Run}). A read compares the partition's units with those:
 * <ul>
 *   <li>a unit removed, or with other content under its number, and every person with rows in it: evaluated again
 *       from all their rows;</li>
 *   <li>rows deleted from a unit since (a merge moved their events, expiry removed them): their persons evaluated
 *       again, the unit's other persons untouched;</li>
 *   <li>a block sealed since from the parts kept (the same events at the same places): it takes their rows over, and
 *       only its rows that were not in those parts are new;</li>
 *   <li>new rows: a person whose new rows all come after every row of its kept evaluation goes on from it with them
 *       alone (events arrive about in the order they happen, so this is nearly everyone on a live dashboard); a
 *       person with a late row, or a funnel that cannot go on (unordered, breakdowns, funnel trends), is evaluated
 *       again from all its rows.</li>
 * </ul>
 * Persons with rows in the tail of the block being filled (stored one by one, which change all the time) go on from
 * a copy of their kept evaluation, or are evaluated from all their rows, for this read only; that contribution is
 * kept apart with the uuids of their tail rows: asked again with the same tail rows and nothing else of theirs
 * changed, they add it as it was. Every other person adds its kept contribution: a funnel shown as steps without a
 * breakdown adds the sum of its persons' outcomes, kept as they change ({@link FunnelTally.Running}), so a read
 * costs what changed, not one step per person. So the answer equals a fresh evaluation of every person; a read that
 * fails part way (a block removed under it, the query cancelled) forgets everything, and the next builds again from
 * nothing.
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
            final PartBytes content = new PartBytes(part, encoded);
            return new Unit(block << 5 | (part + 1), content, deleted, content::decoded);
        }
    }

    /** The tail of a block being filled (rows stored one by one), with its rows not stored any more. */
    public record UnsealedBlock(EventBlock block, BitSet deleted) {
    }

    private record Applied(Object content, BitSet deleted) {
    }

    private static final long[] NO_ROWS = {};

    /** What is kept of one person with funnel rows in the units. */
    private static final class Kept {
        /**
         * Its funnel rows, the first {@link #count}: each the unit's number shifted by {@link #ROW_BITS}, or'ed with
         * the row. Grown in place: a live dashboard appends a few rows a person at every read.
         */
        long[] rows = NO_ROWS;
        int count;
        /**
         * What it adds to the answer from those rows (null when nothing): a funnel that goes on ({@link #run}) or is
         * {@link FunnelQuery#tallied tallied} has one outcome a person, kept as such (and in {@link #tally}); other
         * funnels a {@link Contribution}.
         */
        FunnelOutcome outcome;
        Contribution contribution;
        /** A funnel whose evaluations go on with later rows ({@link FunnelQuery#run}): its evaluation after them. */
        OrderedFunnel.Run run;
        /** Whether {@link #contribution} (and {@link #run}) are from its rows as they are. */
        boolean evaluated;
        long bytes;

        void append(final long[] more) {
            if (count + more.length > rows.length) {
                // Half again to spare: a person's rows come a few at a time (copied less often), and most persons
                // have a dozen or two (little left unused).
                final int needed = count + more.length;
                rows = Arrays.copyOf(rows, needed + (needed >> 1));
            }
            System.arraycopy(more, 0, rows, count, more.length);
            count += more.length;
        }

        /** Forgets the rows {@code drop} says; whether there were any. */
        boolean removeIf(final java.util.function.LongPredicate drop) {
            int kept = 0;
            for (int i = 0; i < count; i++) {
                if (!drop.test(rows[i])) {
                    rows[kept++] = rows[i];
                }
            }
            final boolean removed = kept < count;
            count = kept;
            return removed;
        }

        boolean hasRowsOf(final long number) {
            for (int i = 0; i < count; i++) {
                if (rows[i] >>> ROW_BITS == number) {
                    return true;
                }
            }
            return false;
        }

        /**
         * What it takes: this, its rows, outcome or contribution and run, its entry in {@link #persons} and the uuid
         * naming it there.
         */
        long weigh() {
            bytes = 48 + 16 + 8L * rows.length + (outcome == null ? 0 : FunnelProgress.weigh(outcome))
                    + (contribution == null ? 0 : contribution.memoryBytes()) + (run == null ? 0 : run.memoryBytes()) + 40 + 32;
            return bytes;
        }

        void forgetEvaluation() {
            evaluated = false;
            outcome = null;
            contribution = null;
            run = null;
        }

        void addTo(final FunnelQuery.Partial into, final List<FunnelOutcome> noBreakdown, final int periodCount) {
            if (outcome != null) {
                noBreakdown.add(outcome);
            } else if (contribution != null) {
                contribution.addTo(into, periodCount);
            }
        }
    }

    /** What an outcome takes (the two without timings are shared). */
    private static long weigh(final FunnelOutcome outcome) {
        return outcome.timings().length == 0 ? 0 : 24 + 16 + 8L * outcome.timings().length;
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
        private final long bytes;

        @SuppressWarnings({"unchecked", "rawtypes"})
        private static final List<String>[] NO_VALUES = new List[0];
        @SuppressWarnings({"unchecked", "rawtypes"})
        private static final List<String>[] NO_BREAKDOWN = new List[] {List.of()};

        /** One outcome without a breakdown value. */
        private Contribution(final FunnelOutcome outcome) {
            values = NO_BREAKDOWN;
            outcomes = new FunnelOutcome[] {outcome};
            periodValues = NO_VALUES;
            periodCells = new int[0][];
            bytes = weigh();
        }

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
            bytes = weigh();
        }

        /** What a person whose only outcome (no breakdown) is {@code outcome} adds; null when it adds nothing. */
        static Contribution of(final FunnelOutcome outcome) {
            return outcome.counts() ? new Contribution(outcome) : null;
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
            return bytes;
        }

        private long weigh() {
            long bytes = 72 + 8L * values.length + 8L * periodValues.length;
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
    /** Per person with funnel rows in the units, what is kept of it (one lookup a person a read). */
    private final Map<UUID, Kept> persons = new HashMap<>();
    /** Bits of a row number in an entry of {@link Kept#rows} (a block has at most 4,096 rows). */
    private static final int ROW_BITS = 13;
    private static final long ROW_MASK = (1L << ROW_BITS) - 1;
    /** What the entries of {@link #persons} took at the last read (each weighed when it was evaluated). */
    private long personsWeight;
    /** The sum of every kept person's {@link Kept#outcome}; made at the first read. */
    private FunnelTally.Running tally;
    /**
     * The last read's snapshot of the tally without its tail persons' outcomes, the tally's version after it and those
     * outcomes: a read that finds all three alike hands the same snapshot on (a refresh with nothing new copies no
     * conversion time).
     */
    private FunnelTally snapshot;
    /** The last read's answer (this partition's part of the funnel): the same units and tail give the same answer. */
    private FunnelQuery.Partial lastAnswer;
    /** The last read's tail blocks and their rows by person: the same blocks give the same rows. */
    private List<UnsealedBlock> lastUnsealed = List.of();
    private Tail lastTail;
    private long snapshotVersion = -1;
    private List<FunnelOutcome> snapshotWithout = List.of();
    /** Per person with rows being filled at the last read: those rows' uuids, and its contribution with them. */
    private final Map<UUID, Tailed> tailed = new HashMap<>();
    private long baseWeight;
    private long weight;
    private int evaluatedLastRead;
    /** Whether the last read copied the tally (a tallied funnel whose sum or tail persons changed). */
    private boolean copiedTallyLastRead;
    private int extendedLastRead;

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
        if (lastAnswer != null && sameBlocks(unsealed, lastUnsealed) && asApplied(sealed)) {
            // Nothing changed since the last read (a dashboard refreshed with no new event here): its answer again.
            evaluatedLastRead = 0;
            extendedLastRead = 0;
            copiedTallyLastRead = false;
            into.merge(lastAnswer);
            return;
        }
        try {
            final FunnelQuery.Partial own = query.partial();
            apply(query, sealed, unsealed, properties, now, check, own);
            into.merge(own);
            lastAnswer = own;
            weight += own.memoryBytes();
        } catch (final RuntimeException | Error e) {
            forget();
            throw e;
        }
    }

    /** Whether {@code sealed} are the units kept, as they were applied (the same content, the same rows deleted). */
    private boolean asApplied(final List<Unit> sealed) {
        if (sealed.size() != blocks.size()) {
            return false;
        }
        for (final Unit unit : sealed) {
            final Applied applied = blocks.get(unit.number());
            if (applied == null || !applied.content().equals(unit.content()) || !applied.deleted().equals(unit.deleted())) {
                return false;
            }
        }
        return true;
    }

    private void apply(final FunnelQuery query, final List<Unit> sealed, final List<UnsealedBlock> unsealed, final PropertyLookup properties,
                       final Instant now, final Runnable check, final FunnelQuery.Partial into) {
        final boolean resumable = query.run().isPresent();
        if (tally == null) {
            tally = new FunnelTally.Running(query.stepCount());
        }
        // Persons with rows being filled (the tail), and which: their events' uuids, in row order.
        final Tail tail;
        if (lastTail != null && sameBlocks(unsealed, lastUnsealed)) {
            // The same tail block as at the last read (a kept tail is built once while it does not change).
            tail = lastTail;
        } else {
            tail = tailRows(query, unsealed, properties, now, check, resumable);
            lastTail = tail;
            lastUnsealed = List.copyOf(unsealed);
        }

        // The units kept: unchanged, thinned (rows deleted since: a merge or expiry), or gone (removed, or another
        // content under their number). Every other unit is fresh.
        final Map<Long, Unit> current = new HashMap<>();
        sealed.forEach(b -> current.put(b.number(), b));
        final Set<Long> gone = new TreeSet<>();
        final Map<Long, BitSet> thinned = new HashMap<>();
        for (final Map.Entry<Long, Applied> kept : blocks.entrySet()) {
            final Unit found = current.get(kept.getKey());
            if (found == null || !found.content().equals(kept.getValue().content())) {
                gone.add(kept.getKey());
            } else if (!found.deleted().equals(kept.getValue().deleted())) {
                final BitSet added = (BitSet) found.deleted().clone();
                added.andNot(kept.getValue().deleted());
                final BitSet back = (BitSet) kept.getValue().deleted().clone();
                back.andNot(found.deleted());
                if (back.isEmpty()) {
                    thinned.put(kept.getKey(), added);
                } else {
                    gone.add(kept.getKey());
                }
            }
        }
        final List<Unit> fresh = new ArrayList<>();
        for (final Unit b : sealed) {
            if (!blocks.containsKey(b.number()) || gone.contains(b.number())) {
                fresh.add(b);
            }
        }
        // A block sealed since holds the parts kept before at the same places: their rows keep their persons' parts.
        final Map<Long, Integer> freshFrom = new HashMap<>();
        for (final Unit b : fresh) {
            if (b.isSealed() && !blocks.containsKey(b.number())) {
                check.run();
                final int adopted = adoptParts(b, current, gone, thinned);
                if (adopted > 0) {
                    freshFrom.put(b.number(), adopted);
                }
            }
        }

        // Persons evaluated again from all their rows: those with rows in a unit gone, or among rows deleted since.
        final Set<UUID> changed = new HashSet<>();
        for (final long number : gone) {
            changed.addAll(Arrays.asList(personsOf.getOrDefault(number, new UUID[0])));
            unindex(number);
        }
        thinned.forEach((number, deleted) -> {
            unindexRows(number, deleted, changed);
            blocks.put(number, new Applied(blocks.get(number).content(), current.get(number).deleted()));
        });

        // The rows of the fresh units. A person whose new rows all come after its evaluation's last event goes on from
        // there (a resumable funnel); every other person with new rows is evaluated again.
        final FunnelQuery.BlockRowsCollector again = query.collector(properties, now);
        final FunnelQuery.BlockRowsCollector later = resumable ? query.collector(properties, now) : again;
        final List<UnitRows> freshRows = new ArrayList<>();
        final List<EventBlock> freshBlocks = new ArrayList<>();
        final List<int[]> freshTaken = new ArrayList<>();
        for (final Unit b : fresh) {
            check.run();
            final EventBlock block = load(b);
            final int[] taken = taken(block, b.deleted(), freshFrom.getOrDefault(b.number(), 0));
            later.add(block, b.deleted(), taken);
            freshRows.add(rowsByActor(later, b.number()));
            freshBlocks.add(block);
            freshTaken.add(taken);
        }
        // Each person with fresh rows is looked up once: its record by its index among the fresh rows' actors.
        final Kept[] keptOf = new Kept[later.actorCount()];
        final Map<UUID, Extension> extended = new HashMap<>();
        if (resumable) {
            later.finishEach((index, actor, events) -> {
                final UUID person = (UUID) actor;
                final Kept kept = persons.get(person);
                keptOf[index] = kept;
                if (changed.contains(person) || kept != null && (kept.run == null || !kept.run.continuesAt(events.get(0).timeMicros()))) {
                    changed.add(person);
                } else {
                    extended.put(person, new Extension(index, events));
                }
            });
        } else {
            for (final UnitRows unit : freshRows) {
                for (final int actor : unit.actors()) {
                    changed.add((UUID) later.actorKey(actor));
                }
            }
        }
        again.only(changed);
        if (resumable && !changed.isEmpty()) {
            for (int i = 0; i < fresh.size(); i++) {
                again.add(freshBlocks.get(i), fresh.get(i).deleted(), freshTaken.get(i));
            }
        }

        // Persons with tail rows: those whose tail rows or other rows are as at the last read add what they added
        // then; those whose evaluation can go on with their tail rows do so (on a copy: the tail is not kept); the
        // others are evaluated again from all their rows for this read.
        final Set<UUID> moving = new HashSet<>();
        final Map<UUID, List<FunnelEvent>> goingOn = new HashMap<>();
        tail.uuids().forEach((person, rows) -> {
            final Tailed had = tailed.get(person);
            if (had != null && !changed.contains(person) && !extended.containsKey(person) && Arrays.equals(had.rows(), rows)) {
                return;
            }
            final List<FunnelEvent> events = tail.events().get(person);
            if (events != null && !changed.contains(person)) {
                final Extension before = extended.get(person);
                final long last = before != null ? before.events().get(before.events().size() - 1).timeMicros() : Long.MIN_VALUE;
                final Kept kept = persons.get(person);
                if (events.get(0).timeMicros() > last && (kept == null || kept.run != null && kept.run.continuesAt(events.get(0).timeMicros()))) {
                    goingOn.put(person, events);
                    return;
                }
            }
            moving.add(person);
        });
        final FunnelQuery.BlockRowsCollector filling = query.collector(properties, now);
        filling.only(moving);
        if (!moving.isEmpty()) {
            for (final UnsealedBlock block : unsealed) {
                filling.add(block.block(), block.deleted());
            }
            for (int i = 0; i < fresh.size(); i++) {
                filling.add(freshBlocks.get(i), fresh.get(i).deleted(), freshTaken.get(i));
            }
        }

        // The rest of the rows of the persons evaluated again, from the units kept: just those rows.
        final Map<Long, IntList> againRows = new TreeMap<>();
        final Map<Long, IntList> fillingRows = new TreeMap<>();
        collect(changed, current, againRows);
        collect(moving, current, fillingRows);
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
        for (final UUID person : changed) {
            final Kept kept = persons.get(person);
            if (kept != null) {
                count(kept, null);
                kept.forgetEvaluation();
            }
        }
        for (int u = 0; u < fresh.size(); u++) {
            final Unit b = fresh.get(u);
            blocks.put(b.number(), new Applied(b.content(), b.deleted()));
            final UnitRows unit = freshRows.get(u);
            final UUID[] inUnit = new UUID[unit.actors().length];
            for (int i = 0; i < inUnit.length; i++) {
                final int actor = unit.actors()[i];
                inUnit[i] = (UUID) later.actorKey(actor);
                Kept kept = keptOf[actor];
                if (kept == null) {
                    kept = persons.computeIfAbsent(inUnit[i], p -> new Kept());
                    keptOf[actor] = kept;
                }
                kept.append(unit.rows()[i]);
            }
            final UUID[] adopted = personsOf.get(b.number());
            if (adopted == null) {
                personsOf.put(b.number(), inUnit);
            } else {
                // A block that took its parts' rows over: their persons and those of its new rows.
                final Set<UUID> both = new HashSet<>(Arrays.asList(adopted));
                both.addAll(Arrays.asList(inUnit));
                personsOf.put(b.number(), both.toArray(UUID[]::new));
            }
        }
        again.finishEach((actor, events) -> {
            final Kept kept = persons.get((UUID) actor);
            if (resumable) {
                kept.run = query.run().orElseThrow();
                kept.run.fold(events);
                count(kept, kept.run.outcome());
            } else if (query.tallied()) {
                count(kept, query.outcome(events));
            } else {
                kept.contribution = query.contribution(events);
            }
            kept.evaluated = true;
            reweigh(kept);
        });
        for (final Extension extension : extended.values()) {
            final List<FunnelEvent> events = extension.events();
            final Kept kept = keptOf[extension.actor()];
            if (kept.run == null) {
                // No rows kept before these: its evaluation starts with them.
                kept.run = query.run().orElseThrow();
            }
            kept.run.fold(events);
            final FunnelOutcome outcome = kept.run.outcome();
            if (kept.outcome == null ? outcome.counts() : !kept.outcome.equals(outcome)) {
                count(kept, outcome);
            }
            kept.evaluated = true;
            reweigh(kept);
        }
        tailed.keySet().retainAll(tail.uuids().keySet());
        goingOn.forEach((person, events) -> {
            final Kept kept = persons.get(person);
            final OrderedFunnel.Run run = kept != null ? kept.run.copy() : query.run().orElseThrow();
            run.fold(events);
            tailed.put(person, new Tailed(tail.uuids().get(person), Contribution.of(run.outcome())));
        });
        filling.finishEach((actor, events) -> tailed.put((UUID) actor, new Tailed(tail.uuids().get(actor), query.contribution(events))));
        // A person moving whose rows the funnel takes none of (all outside its steps) adds nothing.
        for (final UUID person : moving) {
            tailed.putIfAbsent(person, new Tailed(tail.uuids().get(person), null));
        }
        check.run();

        for (final UUID person : changed) {
            final Kept kept = persons.get(person);
            if (kept != null && !kept.evaluated) {
                throw new IllegalStateException("person " + person + " has rows but no evaluation");
            }
        }

        final int periodCount = query.periodCells();
        // Every person's part: with tail rows as evaluated with them, else as kept. A funnel that needs only the sum
        // of its persons' outcomes takes the tally (every person kept) without those of persons with tail rows.
        if (query.tallied()) {
            final List<FunnelOutcome> tailedOut = new ArrayList<>();
            for (final UUID person : tail.uuids().keySet()) {
                final Kept kept = persons.get(person);
                if (kept != null && kept.outcome != null) {
                    tailedOut.add(kept.outcome);
                }
            }
            copiedTallyLastRead = snapshot == null || snapshotVersion != tally.version() || !sameOutcomes(tailedOut, snapshotWithout);
            if (copiedTallyLastRead) {
                tailedOut.forEach(tally::remove);
                snapshot = tally.snapshot();
                tailedOut.forEach(tally::add);
                snapshotVersion = tally.version();
                snapshotWithout = tailedOut;
            }
            into.add(snapshot);
        } else {
            final List<FunnelOutcome> noBreakdown = into.outcomes.computeIfAbsent(List.of(), v -> new ArrayList<>());
            for (final Map.Entry<UUID, Kept> entry : persons.entrySet()) {
                if (!tail.uuids().containsKey(entry.getKey())) {
                    entry.getValue().addTo(into, noBreakdown, periodCount);
                }
            }
            if (noBreakdown.isEmpty()) {
                into.outcomes.remove(List.of(), noBreakdown);
            }
        }
        for (final Tailed t : tailed.values()) {
            if (t.contribution() != null) {
                t.contribution().addTo(into, periodCount);
            }
        }
        evaluatedLastRead = changed.size() + moving.size();
        extendedLastRead = extended.size() + goingOn.size();
        if (!gone.isEmpty() || !fresh.isEmpty() || !thinned.isEmpty() || baseWeight == 0) {
            baseWeight = weighUnits();
        }
        weight = baseWeight + personsWeight + weighTails() + tally.memoryBytes() + (snapshot == null ? 0 : snapshot.memoryBytes());
    }

    /** Whether the two lists hold the same blocks (the same objects) with the same deleted rows, in the same order. */
    private static boolean sameBlocks(final List<UnsealedBlock> a, final List<UnsealedBlock> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i).block() != b.get(i).block() || !a.get(i).deleted().equals(b.get(i).deleted())) {
                return false;
            }
        }
        return true;
    }

    /** Whether the two lists hold the same outcomes (the same objects) in the same order. */
    private static boolean sameOutcomes(final List<FunnelOutcome> a, final List<FunnelOutcome> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i) != b.get(i)) {
                return false;
            }
        }
        return true;
    }

    /** Makes {@code outcome} (null: none) the kept person's, in the tally too. */
    private void count(final Kept kept, final FunnelOutcome outcome) {
        if (kept.outcome != null) {
            tally.remove(kept.outcome);
        }
        kept.outcome = outcome == null || !outcome.counts() ? null : outcome;
        if (kept.outcome != null) {
            tally.add(kept.outcome);
        }
    }

    /** Weighs a kept person again, and the persons' weight with it. */
    private void reweigh(final Kept kept) {
        personsWeight -= kept.bytes;
        personsWeight += kept.weigh();
    }

    /** Forgets a person with no rows left, its outcome and weight. */
    private void drop(final UUID person) {
        final Kept kept = persons.remove(person);
        count(kept, null);
        personsWeight -= kept.bytes;
    }

    /** Rows {@code from} on of {@code block} but the deleted ones, ascending; null for all of them but the deleted. */
    private static int[] taken(final EventBlock block, final BitSet deleted, final int from) {
        if (from == 0) {
            return null;
        }
        final IntList rows = new IntList();
        for (int r = deleted.nextClearBit(from); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
            rows.add(r);
        }
        return rows.sorted();
    }

    /**
     * The tail's rows that the funnel takes: per person, their event uuids in row order (two longs each: the same
     * uuids are the same rows, so the person's part with them is as it was), and (a resumable funnel) their funnel
     * events in timeline order.
     */
    private record Tail(Map<UUID, long[]> uuids, Map<UUID, List<FunnelEvent>> events) {
    }

    private static Tail tailRows(final FunnelQuery query, final List<UnsealedBlock> unsealed, final PropertyLookup properties,
                                 final Instant now, final Runnable check, final boolean resumable) {
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
        final Map<UUID, List<FunnelEvent>> events = new HashMap<>();
        if (resumable) {
            probe.finishEach((actor, list) -> events.put((UUID) actor, list));
        }
        return new Tail(tailOf, events);
    }

    /**
     * When {@code block} (a sealed block new to this progress) holds, from its first row, the rows of parts of the
     * same block kept from earlier reads (as a block sealed from its parts does: the same events of the same persons
     * at the same times, in the same places), its number takes over their rows and their persons, the parts are no
     * longer {@code gone}, and rows it deleted since join {@code thinned}. The rows of {@code block} so adopted (0
     * when none: every row of it is then fresh).
     */
    private int adoptParts(final Unit block, final Map<Long, Unit> current, final Set<Long> gone, final Map<Long, BitSet> thinned) {
        final List<Long> parts = new ArrayList<>();
        for (long part = block.number() + 1; part < block.number() + 32 && gone.contains(part) && !current.containsKey(part)
                && blocks.get(part).content() instanceof PartBytes; part++) {
            parts.add(part);
        }
        if (parts.isEmpty()) {
            return 0;
        }
        final EventBlock rows = load(block);
        final int[] offsets = new int[parts.size() + 1];
        final BitSet deletedBefore = new BitSet();
        for (int p = 0; p < parts.size(); p++) {
            final Applied kept = blocks.get(parts.get(p));
            final EventBlock part = ((PartBytes) kept.content()).decoded();
            final int offset = offsets[p];
            if (offset + part.rows() > rows.rows()) {
                return 0;
            }
            for (int r = 0; r < part.rows(); r++) {
                if (part.timeMicros(r) != rows.timeMicros(offset + r) || !part.uuid(r).equals(rows.uuid(offset + r))
                        || !part.person(part.persons().code(r)).equals(rows.person(rows.persons().code(offset + r)))) {
                    return 0;
                }
            }
            kept.deleted().stream().forEach(r -> deletedBefore.set(offset + r));
            offsets[p + 1] = offset + part.rows();
        }
        final int adopted = offsets[parts.size()];
        final BitSet deletedNow = block.deleted().get(0, adopted);
        final BitSet back = (BitSet) deletedBefore.clone();
        back.andNot(deletedNow);
        if (!back.isEmpty()) {
            return 0;
        }
        final Set<UUID> taken = new HashSet<>();
        for (int p = 0; p < parts.size(); p++) {
            final long part = parts.get(p);
            final long offset = offsets[p];
            final UUID[] had = personsOf.remove(part);
            blocks.remove(part);
            gone.remove(part);
            for (final UUID person : had == null ? new UUID[0] : had) {
                taken.add(person);
                final Kept kept = persons.get(person);
                final long[] entries = kept.rows;
                for (int i = 0; i < kept.count; i++) {
                    if (entries[i] >>> ROW_BITS == part) {
                        entries[i] = block.number() << ROW_BITS | (offset + (entries[i] & ROW_MASK));
                    }
                }
            }
        }
        personsOf.put(block.number(), taken.toArray(UUID[]::new));
        blocks.put(block.number(), new Applied(block.content(), deletedBefore));
        final BitSet added = (BitSet) deletedNow.clone();
        added.andNot(deletedBefore);
        if (!added.isEmpty()) {
            thinned.put(block.number(), added);
        }
        return adopted;
    }

    /** A person's new rows' events, later than its kept evaluation's, and its index among the fresh rows' actors. */
    private record Extension(int actor, List<FunnelEvent> events) {
    }

    /** A unit's rows per actor: actors by their index in the collector, each with its rows as {@link Kept#rows} entries. */
    private record UnitRows(int[] actors, long[][] rows) {
    }

    /** The rows {@code collector}'s last add took from unit {@code number}, per actor. */
    private static UnitRows rowsByActor(final FunnelQuery.BlockRowsCollector collector, final long number) {
        // Each row as (actor, row) in one long, sorted: each actor's rows ascending in one run.
        final FunnelQuery.RowsTaken taken = collector.lastBlockRows();
        final long[] pairs = new long[taken.size()];
        for (int i = 0; i < pairs.length; i++) {
            pairs[i] = (long) taken.actor(i) << 32 | taken.row(i);
        }
        Arrays.sort(pairs);
        final IntList actors = new IntList();
        final List<long[]> rows = new ArrayList<>();
        for (int i = 0; i < pairs.length; ) {
            final int actor = (int) (pairs[i] >>> 32);
            int j = i + 1;
            while (j < pairs.length && (int) (pairs[j] >>> 32) == actor) {
                j++;
            }
            final long[] entries = new long[j - i];
            for (int k = i; k < j; k++) {
                entries[k - i] = number << ROW_BITS | (pairs[k] & 0xFFFF_FFFFL);
            }
            actors.add(actor);
            rows.add(entries);
            i = j;
        }
        return new UnitRows(actors.toArray(), rows.toArray(long[][]::new));
    }

    /** The rows of {@code who} in the units kept (those gone are unindexed by now), per unit. */
    private void collect(final Set<UUID> who, final Map<Long, Unit> current, final Map<Long, IntList> into) {
        for (final UUID person : who) {
            final Kept kept = persons.get(person);
            for (int i = 0; kept != null && i < kept.count; i++) {
                final long entry = kept.rows[i];
                final long number = entry >>> ROW_BITS;
                if (current.containsKey(number)) {
                    into.computeIfAbsent(number, n -> new IntList()).add((int) (entry & ROW_MASK));
                }
            }
        }
    }

    /**
     * Forgets the rows of unit {@code number} that were {@code deleted} since (a merge moved their events, or expiry
     * removed them); the persons they were of join {@code changed}.
     */
    private void unindexRows(final long number, final BitSet deleted, final Set<UUID> changed) {
        final UUID[] inUnit = personsOf.get(number);
        if (inUnit == null) {
            return;
        }
        final List<UUID> left = new ArrayList<>(inUnit.length);
        for (final UUID person : inUnit) {
            final Kept kept = persons.get(person);
            if (kept.removeIf(e -> e >>> ROW_BITS == number && deleted.get((int) (e & ROW_MASK)))) {
                changed.add(person);
                if (kept.count == 0) {
                    drop(person);
                }
            }
            if (kept.hasRowsOf(number)) {
                left.add(person);
            }
        }
        personsOf.put(number, left.toArray(UUID[]::new));
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

        int[] toArray() {
            return Arrays.copyOf(values, size);
        }

        int[] sorted() {
            final int[] out = toArray();
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
        final UUID[] inUnit = personsOf.remove(number);
        if (inUnit == null) {
            return;
        }
        for (final UUID person : inUnit) {
            final Kept kept = persons.get(person);
            kept.removeIf(entry -> entry >>> ROW_BITS == number);
            if (kept.count == 0) {
                drop(person);
            }
        }
    }

    private void forget() {
        blocks.clear();
        personsOf.clear();
        persons.clear();
        tailed.clear();
        personsWeight = 0;
        tally = null;
        lastAnswer = null;
        lastTail = null;
        lastUnsealed = List.of();
        snapshot = null;
        snapshotVersion = -1;
        snapshotWithout = List.of();
        baseWeight = 0;
        weight = 0;
    }

    /** What the units and their index take (weighed when the units change). */
    private long weighUnits() {
        long bytes = 256;
        for (final Applied applied : blocks.values()) {
            bytes += 96 + (applied.content() instanceof PartBytes part ? part.memoryBytes() : 0);
        }
        for (final UUID[] inUnit : personsOf.values()) {
            bytes += 48 + 8L * inUnit.length;
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
    /** Whether the last read copied the tally of kept outcomes (it did not if nothing it sums changed), for tests. */
    synchronized boolean copiedTallyLastRead() {
        return copiedTallyLastRead;
    }

    synchronized int evaluatedLastRead() {
        return evaluatedLastRead;
    }

    /** How many persons the last read went on evaluating with their new rows alone, for tests. */
    synchronized int extendedLastRead() {
        return extendedLastRead;
    }

    /** The persons with a contribution kept (for tests and metrics). */
    synchronized int persons() {
        return (int) persons.values().stream().filter(k -> k.outcome != null || k.contribution != null).count();
    }
}
