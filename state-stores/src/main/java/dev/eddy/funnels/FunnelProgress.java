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
 * <p>The persons are kept in arrays by a number each is given ({@link KeptPersons}): rows as ints (a unit's ordinal
 * and the row), evaluations {@link OrderedFunnel.Run#freeze frozen} to longs, and each unit's persons as packed
 * numbers ({@link PersonNumbers}); about 300 bytes a person of a 3-step funnel over 20 events each, where objects took
 * 630 (bench-funnel-progress).
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

    /**
     * A unit as applied: its content and deleted rows, and its ordinal (a number given while it is kept, in the
     * entries of its rows: {@link #entry}).
     */
    private record Applied(Object content, BitSet deleted, int ordinal) {
        Applied with(final BitSet deletedNow) {
            return new Applied(content, deletedNow, ordinal);
        }
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
    /** Per unit, the numbers of the persons with funnel rows in it ({@link PersonNumbers packed}). */
    private final Map<Long, byte[]> personsOf = new HashMap<>();
    /** The persons with funnel rows in the units: their rows, evaluations, outcomes (one lookup a person a read). */
    private KeptPersons persons = new KeptPersons();
    /**
     * Bits of a row in an entry (a block has at most 4,096 rows): an entry is an int, the unit's ordinal in the bits
     * above, so a partition may keep 2^19 units (of 2^31 rows) at once.
     */
    private static final int ROW_BITS = 13;
    private static final int ROW_MASK = (1 << ROW_BITS) - 1;
    private static final int MAX_ORDINALS = 1 << (Integer.SIZE - ROW_BITS);
    /** Per ordinal given, its unit's number. */
    private long[] unitOfOrdinal = new long[64];
    /** Ordinals of units no longer kept, to give again. */
    private final IntList freeOrdinals = new IntList();
    private int ordinals;
    /** The sum of every kept person's outcome; made at the first read. */
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
            unindex(number, changed);
        }
        thinned.forEach((number, deleted) -> {
            unindexRows(number, deleted, changed);
            blocks.put(number, blocks.get(number).with(current.get(number).deleted()));
        });

        // The rows of the fresh units. A person whose new rows all come after its evaluation's last event goes on from
        // there (a resumable funnel); every other person with new rows is evaluated again.
        final FunnelQuery.BlockRowsCollector again = query.collector(properties, now);
        final FunnelQuery.BlockRowsCollector later = resumable ? query.collector(properties, now) : again;
        final List<UnitRows> freshRows = new ArrayList<>();
        final List<EventBlock> freshBlocks = new ArrayList<>();
        final List<int[]> freshTaken = new ArrayList<>();
        final int[] freshOrdinals = new int[fresh.size()];
        for (int u = 0; u < fresh.size(); u++) {
            final Unit b = fresh.get(u);
            check.run();
            final EventBlock block = load(b);
            final int[] taken = taken(block, b.deleted(), freshFrom.getOrDefault(b.number(), 0));
            later.add(block, b.deleted(), taken);
            // A block that took its parts' rows over keeps their ordinal; any other fresh unit is given one.
            final Applied adopted = blocks.get(b.number());
            freshOrdinals[u] = adopted != null ? adopted.ordinal() : newOrdinal(b.number());
            freshRows.add(rowsByActor(later, freshOrdinals[u]));
            freshBlocks.add(block);
            freshTaken.add(taken);
        }
        // Each person with fresh rows is looked up once: its record by its index among the fresh rows' actors.
        final int[] keptOf = new int[later.actorCount()];
        Arrays.fill(keptOf, -1);
        final Map<UUID, Extension> extended = new HashMap<>();
        if (resumable) {
            later.finishEach((index, actor, events) -> {
                final UUID person = (UUID) actor;
                final int kept = persons.numberOf(person);
                keptOf[index] = kept;
                if (changed.contains(person) || kept >= 0 && !goesOnAt(kept, events.get(0).timeMicros())) {
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
                final int kept = persons.numberOf(person);
                if (events.get(0).timeMicros() > last && (kept < 0 || goesOnAt(kept, events.get(0).timeMicros()))) {
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
            final int kept = persons.numberOf(person);
            if (kept >= 0) {
                recount(persons.outcome(kept), null);
                persons.forgetEvaluation(kept);
            }
        }
        for (int u = 0; u < fresh.size(); u++) {
            final Unit b = fresh.get(u);
            blocks.put(b.number(), new Applied(b.content(), b.deleted(), freshOrdinals[u]));
            final UnitRows unit = freshRows.get(u);
            final int[] inUnit = new int[unit.actors().length];
            for (int i = 0; i < inUnit.length; i++) {
                final int actor = unit.actors()[i];
                if (keptOf[actor] < 0) {
                    keptOf[actor] = persons.add((UUID) later.actorKey(actor));
                }
                inUnit[i] = keptOf[actor];
                persons.append(keptOf[actor], unit.rows()[i]);
            }
            // A block that took its parts' rows over: their persons and those of its new rows.
            personsOf.merge(b.number(), PersonNumbers.pack(inUnit), PersonNumbers::union);
        }
        again.finishEach((actor, events) -> {
            final int kept = persons.numberOf((UUID) actor);
            if (resumable) {
                final OrderedFunnel.Run run = query.run().orElseThrow();
                run.fold(events);
                persons.evaluate(kept, run.freeze(), recount(persons.outcome(kept), run.outcome()), null);
            } else if (query.tallied()) {
                persons.evaluate(kept, null, recount(persons.outcome(kept), query.outcome(events)), null);
            } else {
                persons.evaluate(kept, null, null, query.contribution(events));
            }
        });
        for (final Extension extension : extended.values()) {
            final int kept = keptOf[extension.actor()];
            // No run kept (no rows before these): its evaluation starts with them.
            final long[] frozen = persons.run(kept);
            final OrderedFunnel.Run run = frozen == null ? query.run().orElseThrow() : query.thaw(frozen);
            run.fold(extension.events());
            final FunnelOutcome outcome = run.outcome();
            final FunnelOutcome had = persons.outcome(kept);
            final boolean same = had == null ? !outcome.counts() : had.equals(outcome);
            persons.evaluate(kept, run.freeze(), same ? had : recount(had, outcome), null);
        }
        tailed.keySet().retainAll(tail.uuids().keySet());
        goingOn.forEach((person, events) -> {
            final int kept = persons.numberOf(person);
            final OrderedFunnel.Run run = kept >= 0 ? query.thaw(persons.run(kept)) : query.run().orElseThrow();
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
            final int kept = persons.numberOf(person);
            if (kept >= 0 && !persons.evaluated(kept)) {
                throw new IllegalStateException("person " + person + " has rows but no evaluation");
            }
        }

        final int periodCount = query.periodCells();
        // Every person's part: with tail rows as evaluated with them, else as kept. A funnel that needs only the sum
        // of its persons' outcomes takes the tally (every person kept) without those of persons with tail rows.
        if (query.tallied()) {
            final List<FunnelOutcome> tailedOut = new ArrayList<>();
            for (final UUID person : tail.uuids().keySet()) {
                final int kept = persons.numberOf(person);
                if (kept >= 0 && persons.outcome(kept) != null) {
                    tailedOut.add(persons.outcome(kept));
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
            final BitSet inTail = new BitSet();
            for (final UUID person : tail.uuids().keySet()) {
                final int kept = persons.numberOf(person);
                if (kept >= 0) {
                    inTail.set(kept);
                }
            }
            final BitSet live = persons.live();
            for (int kept = live.nextSetBit(0); kept >= 0; kept = live.nextSetBit(kept + 1)) {
                if (inTail.get(kept)) {
                    continue;
                }
                // A funnel whose persons go on without being tallied (time to convert) keeps outcomes; others contributions.
                if (persons.outcome(kept) != null) {
                    noBreakdown.add(persons.outcome(kept));
                } else if (persons.contribution(kept) != null) {
                    persons.contribution(kept).addTo(into, periodCount);
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
        // The snapshot's times are the running tally's last sorted times (weighed with it).
        weight = baseWeight + persons.memoryBytes() + weighTails() + tally.memoryBytes();
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

    /**
     * A kept person's outcome {@code had} (null: none) becomes {@code outcome} in the tally; what to keep as its
     * outcome (null when it does not count).
     */
    private FunnelOutcome recount(final FunnelOutcome had, final FunnelOutcome outcome) {
        if (had != null) {
            tally.remove(had);
        }
        final FunnelOutcome counted = outcome == null || !outcome.counts() ? null : outcome;
        if (counted != null) {
            tally.add(counted);
        }
        return counted;
    }

    /** Whether the kept person's evaluation goes on with events from {@code timeMicros} on (it has one, and they are later). */
    private boolean goesOnAt(final int kept, final long timeMicros) {
        final long[] run = persons.run(kept);
        return run != null && OrderedFunnel.continuesAt(run, timeMicros);
    }

    /** Forgets a person with no rows left, its outcome and weight. */
    private void drop(final int kept) {
        recount(persons.outcome(kept), null);
        persons.drop(kept);
    }

    /** An entry of a person's rows: row {@code row} of the unit given {@code ordinal}. */
    private static int entry(final int ordinal, final int row) {
        return ordinal << ROW_BITS | row;
    }

    private static int ordinalOf(final int entry) {
        return entry >>> ROW_BITS;
    }

    /** An ordinal for unit {@code number} (one given up before, if any). */
    private int newOrdinal(final long number) {
        final int ordinal;
        if (freeOrdinals.size() > 0) {
            ordinal = freeOrdinals.removeLast();
        } else if (ordinals < MAX_ORDINALS) {
            ordinal = ordinals++;
            if (ordinal == unitOfOrdinal.length) {
                unitOfOrdinal = Arrays.copyOf(unitOfOrdinal, ordinal * 2);
            }
        } else {
            throw new IllegalStateException("a funnel progress keeps at most " + MAX_ORDINALS + " units of a partition");
        }
        unitOfOrdinal[ordinal] = number;
        return ordinal;
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
        final int ordinal = newOrdinal(block.number());
        byte[] taken = PersonNumbers.pack(new int[0]);
        for (int p = 0; p < parts.size(); p++) {
            final long part = parts.get(p);
            final int offset = offsets[p];
            final int partOrdinal = blocks.remove(part).ordinal();
            final byte[] had = personsOf.remove(part);
            gone.remove(part);
            if (had != null) {
                for (final int kept : PersonNumbers.unpack(had)) {
                    for (int i = 0; i < persons.rowCount(kept); i++) {
                        final int entry = persons.row(kept, i);
                        if (ordinalOf(entry) == partOrdinal) {
                            persons.setRow(kept, i, entry(ordinal, offset + (entry & ROW_MASK)));
                        }
                    }
                }
                taken = PersonNumbers.union(taken, had);
            }
            freeOrdinals.add(partOrdinal);
        }
        personsOf.put(block.number(), taken);
        blocks.put(block.number(), new Applied(block.content(), deletedBefore, ordinal));
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

    /** A unit's rows per actor: actors by their index in the collector, each with its rows as {@link #entry entries}. */
    private record UnitRows(int[] actors, int[][] rows) {
    }

    /** The rows {@code collector}'s last add took from the unit given {@code ordinal}, per actor. */
    private static UnitRows rowsByActor(final FunnelQuery.BlockRowsCollector collector, final int ordinal) {
        // Each row as (actor, row) in one long, sorted: each actor's rows ascending in one run.
        final FunnelQuery.RowsTaken taken = collector.lastBlockRows();
        final long[] pairs = new long[taken.size()];
        for (int i = 0; i < pairs.length; i++) {
            pairs[i] = (long) taken.actor(i) << 32 | taken.row(i);
        }
        Arrays.sort(pairs);
        final IntList actors = new IntList();
        final List<int[]> rows = new ArrayList<>();
        for (int i = 0; i < pairs.length; ) {
            final int actor = (int) (pairs[i] >>> 32);
            int j = i + 1;
            while (j < pairs.length && (int) (pairs[j] >>> 32) == actor) {
                j++;
            }
            final int[] entries = new int[j - i];
            for (int k = i; k < j; k++) {
                entries[k - i] = entry(ordinal, (int) pairs[k]);
            }
            actors.add(actor);
            rows.add(entries);
            i = j;
        }
        return new UnitRows(actors.toArray(), rows.toArray(int[][]::new));
    }

    /** The rows of {@code who} in the units kept (those gone are unindexed by now), per unit. */
    private void collect(final Set<UUID> who, final Map<Long, Unit> current, final Map<Long, IntList> into) {
        for (final UUID person : who) {
            final int kept = persons.numberOf(person);
            for (int i = 0; kept >= 0 && i < persons.rowCount(kept); i++) {
                final int entry = persons.row(kept, i);
                final long number = unitOfOrdinal[ordinalOf(entry)];
                if (current.containsKey(number)) {
                    into.computeIfAbsent(number, n -> new IntList()).add(entry & ROW_MASK);
                }
            }
        }
    }

    /**
     * Forgets the rows of unit {@code number} that were {@code deleted} since (a merge moved their events, or expiry
     * removed them); the persons they were of join {@code changed}.
     */
    private void unindexRows(final long number, final BitSet deleted, final Set<UUID> changed) {
        final byte[] inUnit = personsOf.get(number);
        if (inUnit == null) {
            return;
        }
        final int ordinal = blocks.get(number).ordinal();
        final IntList left = new IntList();
        for (final int kept : PersonNumbers.unpack(inUnit)) {
            if (persons.removeRowsIf(kept, e -> ordinalOf(e) == ordinal && deleted.get(e & ROW_MASK))) {
                changed.add(persons.uuid(kept));
                if (persons.rowCount(kept) == 0) {
                    drop(kept);
                    continue;
                }
            }
            if (hasRowsOf(kept, ordinal)) {
                left.add(kept);
            }
        }
        personsOf.put(number, PersonNumbers.pack(left.toArray()));
    }

    private boolean hasRowsOf(final int kept, final int ordinal) {
        for (int i = 0; i < persons.rowCount(kept); i++) {
            if (ordinalOf(persons.row(kept, i)) == ordinal) {
                return true;
            }
        }
        return false;
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

        int size() {
            return size;
        }

        int removeLast() {
            return values[--size];
        }

        void clear() {
            size = 0;
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

    /** Forgets unit {@code number} (removed, or another content under its number); its persons join {@code changed}. */
    private void unindex(final long number, final Set<UUID> changed) {
        final int ordinal = blocks.remove(number).ordinal();
        freeOrdinals.add(ordinal);
        final byte[] inUnit = personsOf.remove(number);
        if (inUnit == null) {
            return;
        }
        for (final int kept : PersonNumbers.unpack(inUnit)) {
            changed.add(persons.uuid(kept));
            persons.removeRowsIf(kept, entry -> ordinalOf(entry) == ordinal);
            if (persons.rowCount(kept) == 0) {
                drop(kept);
            }
        }
    }

    private void forget() {
        blocks.clear();
        personsOf.clear();
        persons = new KeptPersons();
        unitOfOrdinal = new long[64];
        freeOrdinals.clear();
        ordinals = 0;
        tailed.clear();
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
        for (final byte[] inUnit : personsOf.values()) {
            bytes += 48 + 16 + inUnit.length;
        }
        bytes += 8L * unitOfOrdinal.length + 4L * freeOrdinals.values.length;
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

    /**
     * What a read did: the persons it evaluated (rows changed, or rows being filled changed), those it went on
     * evaluating with their new rows alone, and whether it copied the tally of kept outcomes (it does not if nothing
     * it sums changed). A read with nothing new evaluates no one.
     */
    public record ReadStats(int evaluated, int extended, boolean copiedTally) {
    }

    /** What the last read did (the funnel benchmark reports it). */
    public synchronized ReadStats lastRead() {
        return new ReadStats(evaluatedLastRead, extendedLastRead, copiedTallyLastRead);
    }

    /** The persons with an outcome or a contribution kept (the funnel benchmark reports it). */
    public synchronized int keptPersons() {
        final BitSet live = persons.live();
        int counted = 0;
        for (int kept = live.nextSetBit(0); kept >= 0; kept = live.nextSetBit(kept + 1)) {
            counted += persons.outcome(kept) != null || persons.contribution(kept) != null ? 1 : 0;
        }
        return counted;
    }
}
