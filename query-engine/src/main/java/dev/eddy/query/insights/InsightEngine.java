package dev.eddy.query.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.KeptTail;
import dev.eddy.columns.PartBytes;
import dev.eddy.columns.StoredBlocks;
import dev.eddy.funnels.FunnelCorrelationQuery;
import dev.eddy.funnels.FunnelProgress;
import dev.eddy.funnels.FunnelQuery;
import dev.eddy.groups.GroupState;
import dev.eddy.insights.Mergeable;
import dev.eddy.insights.PartialQuery;
import dev.eddy.paths.PathQuery;
import dev.eddy.persons.PersonState;
import dev.eddy.query.InvalidQuery;
import dev.eddy.query.PartitionRead;
import dev.eddy.query.PartitionUnavailable;
import dev.eddy.query.Stores;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.HourlyCells;
import dev.eddy.trends.LifecycleQuery;
import dev.eddy.trends.PropertyLookup;
import dev.eddy.trends.RetentionQuery;
import dev.eddy.trends.StickinessQuery;
import dev.eddy.trends.TimelineEventSource;
import dev.eddy.trends.TrendActorsQuery;
import dev.eddy.trends.TrendQuery;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Trends and funnels over the stores of a streams instance, and the insights read as trends of distinct actors
 * (stickiness, lifecycles, retention). A query is parsed into a {@link Calculation} (refused
 * with {@link InvalidQuery} as PostHog refuses it); every instance then reads a mergeable partial of the timeline
 * partitions it runs ({@link #read}: a person and its timeline live on one partition, with the person's properties),
 * and the merged partials make PostHog's result ({@link Calculation#result}). Who reads which partitions, and how
 * partials travel, is the caller's. The caller's {@code check} bounds every scan, so a read stops within its time
 * limit or when cancelled.
 *
 * <p>Trends that only count events or distinct persons, unfiltered and not broken down, read each partition's
 * rollups instead of its events: hourly counts ({@link StoreNames#HOURLY_COUNTS}) and unique-person markers
 * ({@link StoreNames#UNIQUE_MARKERS}), which the topology keeps equal to the timelines. A 30-day daily count reads
 * 720 cells per event name once, and then only the cells of hours not settled yet ({@link SettledHours}); daily
 * actives one marker per person and day active. Other trends read each partition's
 * event blocks ({@link StoredBlocks}: only the columns they use, filters decided per distinct value) once every event
 * of the partition has its row there, and its timelines until then; so do funnels, whose rows are gathered person by
 * person from the blocks and each person evaluated over its events in timeline order. Answers of sealed blocks (and
 * funnels' per-person progress) are kept for queries asked again ({@link BlockAnswers}).
 */
public final class InsightEngine {
    /** The kind of the earliest-event read, gathered first for {@code date_from: all}. */
    public static final String EARLIEST = "earliest";
    /** Scans check once per this many timeline entries. */
    private static final int CHECK_EVERY = 4096;
    /**
     * The most rows of sealed blocks a funnel gathers from a partition at once (about 150 MB of heap at most: its step
     * events, each with its uuid); a larger partition is read in shares of its persons.
     */
    static final long ROWS_PER_SHARE = 1 << 20;

    private final BlockAnswers answers;
    private final Map<Kind, PartitionRead<?>> reads = new EnumMap<>(Kind.class);

    /**
     * @param blockCacheBytes  how much heap this instance's sealed blocks may take kept decoded ({@code insights.block-cache};
     *                         0 keeps none)
     * @param answerCacheBytes how much heap sealed blocks' answers may take kept ({@code insights.answer-cache}; 0 keeps none)
     */
    public InsightEngine(final long blockCacheBytes, final long answerCacheBytes, final MeterRegistry registry) {
        final BlockCache blocks = new BlockCache(blockCacheBytes, registry);
        this.answers = new BlockAnswers(answerCacheBytes, registry);
        for (final Kind kind : Kind.values()) {
            reads.put(kind, part(kind.engine, blocks, answers));
        }
    }

    /** The partial read of {@code kind}, known to every instance under {@link Kind#path}. */
    public PartitionRead<?> read(final Kind kind) {
        return reads.get(kind);
    }

    /** The read of a project's earliest event, known to every instance under {@link #EARLIEST}. */
    public PartitionRead<Optional<Long>> earliest() {
        return new Earliest();
    }

    /**
     * A query parsed for a project as of {@code nowMicros}.
     *
     * @throws InvalidQuery when PostHog would refuse it (and when the project's timezone is not a zone)
     */
    public Calculation calculation(final Kind kind, final Scope scope, final JsonNode query, final long nowMicros) {
        try {
            scope.zone();
        } catch (final DateTimeException e) {
            throw new InvalidQuery("The project's timezone '" + scope.timezone() + "' is not valid.");
        }
        return new Calculation(kind, new Request(scope, query, nowMicros, Optional.empty(), false), false);
    }

    /**
     * One query of one kind for one project, parsed: the request every instance reads its partial for, and the
     * result of their merged partials. A query over {@code date_from: all} first needs the project's earliest event
     * ({@link #needsEarliest}), gathered with {@link #EARLIEST} over {@link #request}; {@link #withEarliest} then
     * gives the calculation to gather.
     */
    public final class Calculation {
        private final Kind kind;
        private final Engine<Object, Object> engine;
        private final Request request;
        private final Object parsed;
        private final boolean needsEarliest;

        /** @param resolved whether {@code draft} carries the project's earliest event as found (if any) */
        @SuppressWarnings("unchecked")
        private Calculation(final Kind kind, final Request draft, final boolean resolved) {
            this.kind = kind;
            this.engine = (Engine<Object, Object>) kind.engine;
            final AtomicBoolean earliest = new AtomicBoolean();
            this.parsed = InvalidQuery.refusing(() -> engine.parse(draft, () -> {
                earliest.set(true);
                return draft.earliest().get();
            }));
            this.needsEarliest = earliest.get() && !resolved;
            this.request = needsEarliest ? draft
                    : new Request(draft.scope(), draft.query(), draft.nowMicros(), draft.earliestMicros(), keep(draft.scope().projectId()));
        }

        /** The kind whose partials to gather ({@link Kind#path}), or {@link #EARLIEST} first. */
        public String kind() {
            return needsEarliest ? EARLIEST : kind.path();
        }

        /** Whether the project's earliest event is needed first (gather {@link #EARLIEST} with {@link #request}). */
        public boolean needsEarliest() {
            return needsEarliest;
        }

        /** The request every instance reads its partial for. */
        public JsonNode request() {
            return request.json();
        }

        /** The calculation once the project's earliest event is known (empty: it has none). */
        public Calculation withEarliest(final Optional<Long> earliestMicros) {
            return new Calculation(kind, new Request(request.scope(), request.query(), request.nowMicros(), earliestMicros, false), true);
        }

        /** PostHog's result from every instance's partial, merged. */
        public JsonNode result(final Object whole) {
            return engine.result(parsed, whole);
        }

        /**
         * Whether every instance keeps its answers for this query: one of a shape that may be kept, asked before
         * ({@link BlockAnswers#askedBefore}, decided here once for every instance).
         */
        private boolean keep(final long projectId) {
            return engine.shape(parsed).map(shape -> answers.askedBefore(projectId + "\n" + kind + "\n" + shape)).orElse(false);
        }
    }

    /**
     * What a calculation is over: the project, in the terms another instance needs to parse the query alike.
     *
     * @param timezone an IANA zone id (a bad one makes {@link #calculation} refuse the query)
     */
    public record Scope(long projectId, String timezone, int weekStartDay, JsonNode testAccountFilters) {
        ZoneId zone() {
            return ZoneId.of(timezone);
        }

        DayOfWeek weekStart() {
            return weekStartDay == 1 ? DayOfWeek.MONDAY : DayOfWeek.SUNDAY;
        }
    }

    /**
     * One calculation as sent to every instance: the query with the moment it is "now" for, and the project's
     * earliest event when {@code date_from: all} needs it, so every instance resolves the same date range; and whether
     * answers are to be kept for the next query of its shape ({@link BlockAnswers#askedBefore}).
     */
    record Request(Scope scope, JsonNode query, long nowMicros, Optional<Long> earliestMicros, boolean keep) {
        Instant now() {
            return TimelineEvent.instant(nowMicros);
        }

        ObjectNode json() {
            final ObjectNode body = Json.mapper().createObjectNode();
            final ObjectNode s = body.putObject("scope");
            s.put("project_id", scope.projectId());
            s.put("timezone", scope.timezone());
            s.put("week_start_day", scope.weekStartDay());
            s.set("test_account_filters", scope.testAccountFilters());
            body.set("query", query);
            body.put("now_micros", nowMicros);
            earliestMicros.ifPresent(e -> body.put("earliest_micros", e));
            body.put("keep_answers", keep);
            return body;
        }

        static Request of(final JsonNode json) {
            final JsonNode s = json.path("scope");
            return new Request(new Scope(s.path("project_id").asLong(), s.path("timezone").asText("UTC"), s.path("week_start_day").asInt(0),
                    s.get("test_account_filters")), json.path("query"), json.path("now_micros").asLong(),
                    json.hasNonNull("earliest_micros") ? Optional.of(json.get("earliest_micros").asLong()) : Optional.empty(),
                    json.path("keep_answers").asBoolean(false));
        }

        Supplier<Optional<Instant>> earliest() {
            return () -> earliestMicros.map(TimelineEvent::instant);
        }
    }

    /**
     * Reads a partition's blocks of a project ({@link StoredBlocks}), calling {@code check} per block: the sealed
     * blocks {@code sealed} finds, the parts and the tail of the block being filled.
     */
    private static void readBlocks(final StoredBlocks.Source blocks, final StoredBlocks.Sealed sealed, final Runnable check,
                                   final StoredBlocks.Visitor visitor) {
        StoredBlocks.read(blocks, sealed, new StoredBlocks.Visitor() {
                    @Override
                    public void block(final EventBlock block, final BitSet deleted) {
                        check.run();
                        visitor.block(block, deleted);
                    }

                    @Override
                    public void sealed(final long projectId, final long block, final BlockKeys.Sealed entry, final BitSet deleted,
                                       final StoredBlocks.Sealed source) {
                        check.run();
                        visitor.sealed(projectId, block, entry, deleted, source);
                    }

                    @Override
                    public void part(final long projectId, final long block, final int part, final byte[] encoded, final BitSet deleted) {
                        check.run();
                        visitor.part(projectId, block, part, encoded, deleted);
                    }
                });
    }

    /** What differs between trends and funnels: parsing, scanning one partition, and the partial's life. */
    private interface Engine<Q, P> {
        Q parse(Request request, Supplier<Optional<Instant>> earliest);

        P partial(Q query);

        void scan(Q query, P partial, KeyValueIterator<Bytes, byte[]> events, PropertyLookup properties, Instant now, Runnable check);

        /**
         * Answers the query for one partition from its hourly counts instead of its events, if they answer it
         * exactly; false to scan the events.
         */
        default boolean count(final Q query, final P partial, final HourlyCells hourly, final ReadOnlyKeyValueStore<Bytes, byte[]> markers,
                              final long projectId) {
            return false;
        }

        /**
         * Adds the project's rows of one partition's event blocks ({@link StoredBlocks}) to the partial, once they
         * hold every event of the partition ({@link #scan} reads its timelines until then).
         *
         * @param kept the query's {@link #shape} when its answers are kept in {@code answers} for the next query of it
         */
        void scanBlocks(Q query, P partial, StoredBlocks.Source blocks, StoredBlocks.Sealed sealed, PropertyLookup properties, Instant now,
                        Runnable check, BlockAnswers answers, Optional<String> kept, long projectId, int partition);

        /** Whether a partition's blocks are read once complete ({@link #scanBlocks}); its timelines always, if not. */
        default boolean readsBlocks() {
            return true;
        }

        /** Whether events between the two moments (microseconds) may count: blocks spanning other times are not read. */
        boolean overlaps(Q query, long firstMicros, long lastMicros);

        /** What decides the answers kept for the query ({@link BlockAnswers}), if any may be kept. */
        Optional<String> shape(Q query);

        P merge(P into, P other);

        byte[] encode(P partial);

        P decode(Q query, byte[] bytes);

        JsonNode result(Q query, P whole);
    }

    public enum Kind {
        TREND(new TrendEngine()),
        FUNNEL(new FunnelEngine(FunnelQuery::parse)),
        STICKINESS(new OverWholeTrend<>(StickinessQuery::parse, StickinessQuery::trend, StickinessQuery::answer)),
        LIFECYCLE(new LifecycleEngine()),
        RETENTION(new OverWholeTrend<>(RetentionQuery::parse, RetentionQuery::trend, RetentionQuery::answer)),
        PATHS(new PathEngine()),
        TREND_ACTORS(new OverWholeTrend<>(TrendActorsQuery::parse, TrendActorsQuery::trend, TrendActorsQuery::result)),
        /** The persons behind a funnel's step (converted or dropped off) or a funnel trend's period: the funnel read with their ids kept. */
        FUNNEL_ACTORS(new FunnelEngine(FunnelQuery::parseActors)),
        /** A funnel's correlation of conversion with events and properties, and the persons behind one of its numbers. */
        FUNNEL_CORRELATION(new CorrelationEngine());

        final Engine<?, ?> engine;

        Kind(final Engine<?, ?> engine) {
            this.engine = engine;
        }

        /** The kind's name where instances ask each other for its partials. */
        public String path() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private static final class TrendEngine implements Engine<TrendQuery, TrendQuery.Partial> {
        @Override
        public TrendQuery parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return parsed(TrendQuery::parse, r, earliest);
        }

        @Override
        public TrendQuery.Partial partial(final TrendQuery query) {
            return query.partial();
        }

        @Override
        public void scan(final TrendQuery query, final TrendQuery.Partial partial, final KeyValueIterator<Bytes, byte[]> events,
                         final PropertyLookup properties, final Instant now, final Runnable check) {
            // Events no series counts are skipped by name and time, undecoded.
            final byte[][] names = query.eventNames().map(TimelineEvent::names).orElse(null);
            int seen = 0;
            while (events.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = events.next();
                if (++seen % CHECK_EVERY == 0) {
                    check.run();
                }
                if (query.relevant(TimelineEvent.timeOf(entry.value)) && (names == null || TimelineEvent.nameIn(entry.value, names))) {
                    query.add(partial, TimelineKeys.person(entry.key).toString(), TimelineEvent.decode(entry.value), properties, now);
                }
            }
        }

        /**
         * Sealed blocks' and parts' partials are kept ({@link BlockAnswers}) when the query's
         * {@link TrendQuery#blockShape shape} alone decides them: a query asked again reads only what was written
         * since (the blocks and parts it has not met, and the newest rows, stored one by one).
         */
        @Override
        public void scanBlocks(final TrendQuery query, final TrendQuery.Partial partial, final StoredBlocks.Source blocks,
                               final StoredBlocks.Sealed sealed, final PropertyLookup properties,
                               final Instant now, final Runnable check, final BlockAnswers answers, final Optional<String> shape,
                               final long projectId, final int partition) {
            // Kept answers: the sealed blocks in range are summed after the walk (as a whole when the partition's are as
            // at the last read), then the parts (likewise), then the tail's rows: in block order, as without keeping (a
            // cell's values are added one by one in the order met, so sums come out alike to the bit).
            final List<BlockAnswers.SealedUnit<TrendQuery.Partial>> sealedUnits = new java.util.ArrayList<>();
            final List<BlockAnswers.SealedUnit<TrendQuery.Partial>> partUnits = new java.util.ArrayList<>();
            final List<Runnable> afterSealed = new java.util.ArrayList<>();
            readBlocks(blocks, sealed, check, new StoredBlocks.Visitor() {
                @Override
                public void block(final EventBlock block, final BitSet deleted) {
                    if (shape.isPresent()) {
                        afterSealed.add(() -> query.add(partial, block, deleted, properties, now));
                    } else {
                        query.add(partial, block, deleted, properties, now);
                    }
                }

                @Override
                public void sealed(final long project, final long block, final BlockKeys.Sealed entry, final BitSet deleted,
                                   final StoredBlocks.Sealed source) {
                    if (shape.isEmpty() || !query.overlaps(entry.firstMicros(), entry.lastMicros())) {
                        StoredBlocks.Visitor.super.sealed(project, block, entry, deleted, source);
                        return;
                    }
                    sealedUnits.add(new BlockAnswers.SealedUnit<>(block, entry.id(), deleted,
                            () -> answers.answer(shape.get(), project, block, entry.id(), deleted, () -> {
                                final EventBlock found = source.block(project, block, entry);
                                return found == null ? null : answerOf(found, deleted);
                            }, TrendQuery.Partial::memoryBytes)));
                }

                @Override
                public void part(final long project, final long block, final int part, final byte[] encoded, final BitSet deleted) {
                    if (shape.isEmpty()) {
                        StoredBlocks.Visitor.super.part(project, block, part, encoded, deleted);
                        return;
                    }
                    final PartBytes content = new PartBytes(part, encoded);
                    partUnits.add(new BlockAnswers.SealedUnit<>(block, content, deleted, () -> answers.answer(shape.get(), project, block, content,
                            deleted, () -> answerOf(content.decoded(), deleted), TrendQuery.Partial::memoryBytes)));
                }

                private TrendQuery.Partial answerOf(final EventBlock block, final BitSet deleted) {
                    final TrendQuery.Partial own = query.partial();
                    query.add(own, block, deleted, properties, now);
                    return own;
                }
            });
            if (!sealedUnits.isEmpty()) {
                partial.merge(answers.sealedSum(shape.orElseThrow(), projectId, partition, sealedUnits, query::partial, TrendQuery.Partial::merge,
                        TrendQuery.Partial::memoryBytes));
            }
            if (!partUnits.isEmpty()) {
                partial.merge(answers.sealedSum(shape.orElseThrow() + "\nparts", projectId, partition, partUnits, query::partial,
                        TrendQuery.Partial::merge, TrendQuery.Partial::memoryBytes));
            }
            afterSealed.forEach(Runnable::run);
        }

        @Override
        public boolean overlaps(final TrendQuery query, final long firstMicros, final long lastMicros) {
            return query.overlaps(firstMicros, lastMicros);
        }

        @Override
        public Optional<String> shape(final TrendQuery query) {
            return query.blockShape();
        }

        @Override
        public boolean count(final TrendQuery query, final TrendQuery.Partial partial, final HourlyCells hourly,
                             final ReadOnlyKeyValueStore<Bytes, byte[]> markers, final long projectId) {
            return query.countInto(partial, hourly, markers, projectId);
        }

        @Override
        public TrendQuery.Partial merge(final TrendQuery.Partial into, final TrendQuery.Partial other) {
            return into.merge(other);
        }

        @Override
        public byte[] encode(final TrendQuery.Partial partial) {
            return partial.encode();
        }

        @Override
        public TrendQuery.Partial decode(final TrendQuery query, final byte[] bytes) {
            return query.decode(bytes);
        }

        @Override
        public JsonNode result(final TrendQuery query, final TrendQuery.Partial whole) {
            return query.result(whole);
        }
    }

    /**
     * An insight read as a trend of distinct actors per interval, whose partial holds that trend's partial: the trend's
     * reads (timelines, blocks, kept answers) fill it, then {@link #afterPartition} adds what the insight needs of each
     * partition beside it.
     */
    private abstract static class OverTrend<Q, P> implements Engine<Q, P> {
        final TrendEngine trends = new TrendEngine();

        abstract TrendQuery trend(Q query);

        abstract TrendQuery.Partial trendPartial(P partial);

        /** What the insight adds after a partition was read with {@code properties}, that partition's lookup. */
        void afterPartition(final Q query, final P partial, final PropertyLookup properties) {
        }

        @Override
        public void scan(final Q query, final P partial, final KeyValueIterator<Bytes, byte[]> events, final PropertyLookup properties,
                         final Instant now, final Runnable check) {
            trends.scan(trend(query), trendPartial(partial), events, properties, now, check);
            afterPartition(query, partial, properties);
        }

        @Override
        public void scanBlocks(final Q query, final P partial, final StoredBlocks.Source blocks, final StoredBlocks.Sealed sealed,
                               final PropertyLookup properties, final Instant now, final Runnable check, final BlockAnswers answers,
                               final Optional<String> kept, final long projectId, final int partition) {
            trends.scanBlocks(trend(query), trendPartial(partial), blocks, sealed, properties, now, check, answers, kept, projectId, partition);
            afterPartition(query, partial, properties);
        }

        @Override
        public boolean overlaps(final Q query, final long firstMicros, final long lastMicros) {
            return trends.overlaps(trend(query), firstMicros, lastMicros);
        }

        @Override
        public Optional<String> shape(final Q query) {
            return trends.shape(trend(query));
        }
    }

    /** How every insight query is read from a request: PostHog's filter in the project's zone, week and test accounts. */
    @FunctionalInterface
    private interface QueryParser<Q> {
        Q parse(JsonNode query, ZoneId zone, DayOfWeek weekStart, JsonNode testAccountFilters, Instant now,
                Supplier<Optional<Instant>> earliest);
    }

    /** A request's query as {@code parser} reads it, in the request's project's time zone, week and test accounts. */
    private static <Q> Q parsed(final QueryParser<Q> parser, final Request r, final Supplier<Optional<Instant>> earliest) {
        return parser.parse(r.query(), r.scope().zone(), r.scope().weekStart(), r.scope().testAccountFilters(), r.now(), earliest);
    }

    /**
     * An insight whose partial is its trend's own (rollups and kept answers included), answered from the merged whole:
     * stickiness (actors by how many intervals they were active in), retention (cohorts of the target and returning
     * events' actors) and the persons behind a trend's number (one series counted per person). Only the parsing, the
     * trend read and the answer are each insight's.
     */
    private static final class OverWholeTrend<Q> extends OverTrend<Q, TrendQuery.Partial> {
        private final QueryParser<Q> parser;
        private final Function<Q, TrendQuery> trend;
        private final BiFunction<Q, TrendQuery.Partial, JsonNode> answer;

        OverWholeTrend(final QueryParser<Q> parser, final Function<Q, TrendQuery> trend,
                       final BiFunction<Q, TrendQuery.Partial, JsonNode> answer) {
            this.parser = parser;
            this.trend = trend;
            this.answer = answer;
        }

        @Override
        public Q parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return parsed(parser, r, earliest);
        }

        @Override
        TrendQuery trend(final Q query) {
            return trend.apply(query);
        }

        @Override
        public JsonNode result(final Q query, final TrendQuery.Partial whole) {
            return answer.apply(query, whole);
        }

        @Override
        TrendQuery.Partial trendPartial(final TrendQuery.Partial partial) {
            return partial;
        }

        @Override
        public TrendQuery.Partial partial(final Q query) {
            return trend(query).partial();
        }

        @Override
        public boolean count(final Q query, final TrendQuery.Partial partial, final HourlyCells hourly,
                             final ReadOnlyKeyValueStore<Bytes, byte[]> markers, final long projectId) {
            return trends.count(trend(query), partial, hourly, markers, projectId);
        }

        @Override
        public TrendQuery.Partial merge(final TrendQuery.Partial into, final TrendQuery.Partial other) {
            return into.merge(other);
        }

        @Override
        public byte[] encode(final TrendQuery.Partial partial) {
            return partial.encode();
        }

        @Override
        public TrendQuery.Partial decode(final Q query, final byte[] bytes) {
            return trend(query).decode(bytes);
        }
    }

    /**
     * A lifecycle reads the partials of its trend of distinct persons per interval ({@link LifecycleQuery#trend}), never
     * the rollups (the persons' creation times are read beside the events), and adds, after each partition, when each
     * of its persons was created.
     */
    private static final class LifecycleEngine extends OverTrend<LifecycleQuery, LifecycleQuery.Partial> {
        @Override
        TrendQuery trend(final LifecycleQuery query) {
            return query.trend();
        }

        @Override
        TrendQuery.Partial trendPartial(final LifecycleQuery.Partial partial) {
            return partial.trend();
        }

        @Override
        void afterPartition(final LifecycleQuery query, final LifecycleQuery.Partial partial, final PropertyLookup properties) {
            query.addCreated(partial, properties);
        }

        @Override
        public LifecycleQuery parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return parsed(LifecycleQuery::parse, r, earliest);
        }

        @Override
        public LifecycleQuery.Partial partial(final LifecycleQuery query) {
            return query.partial();
        }

        @Override
        public LifecycleQuery.Partial merge(final LifecycleQuery.Partial into, final LifecycleQuery.Partial other) {
            return into.merge(other);
        }

        @Override
        public byte[] encode(final LifecycleQuery.Partial partial) {
            return partial.encode();
        }

        @Override
        public LifecycleQuery.Partial decode(final LifecycleQuery query, final byte[] bytes) {
            return query.decode(bytes);
        }

        @Override
        public JsonNode result(final LifecycleQuery query, final LifecycleQuery.Partial whole) {
            return query.answer(whole);
        }
    }

    /** An insight whose query makes its own shares ({@link PartialQuery}): only its reading is its engine's. */
    private abstract static class OverPartials<Q extends PartialQuery<P>, P extends Mergeable<P>> implements Engine<Q, P> {
        @Override
        public P partial(final Q query) {
            return query.partial();
        }

        @Override
        public P merge(final P into, final P other) {
            return into.merge(other);
        }

        @Override
        public byte[] encode(final P partial) {
            return partial.encode();
        }

        @Override
        public P decode(final Q query, final byte[] bytes) {
            return query.decode(bytes);
        }

        @Override
        public JsonNode result(final Q query, final P whole) {
            return query.result(whole);
        }
    }

    /**
     * Paths read each person's events in time order: from the timelines person by person (the store's key order), or
     * from the blocks by gathering the rows that are steps (their person, time and path item) and ordering them by
     * person and time.
     */
    private static final class PathEngine extends OverPartials<PathQuery, PathQuery.Partial> {
        /** A step read from a block: its person, time, and the order it was read in (for equal times). */
        private record Row(String person, long timeMicros, long read, String item) {
        }

        @Override
        public PathQuery parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return parsed(PathQuery::parse, r, earliest);
        }


        @Override
        public void scan(final PathQuery query, final PathQuery.Partial partial, final KeyValueIterator<Bytes, byte[]> events,
                         final PropertyLookup properties, final Instant now, final Runnable check) {
            UUID current = null;
            final List<PathQuery.Step> steps = new java.util.ArrayList<>();
            int seen = 0;
            while (events.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = events.next();
                if (++seen % CHECK_EVERY == 0) {
                    check.run();
                }
                final UUID person = TimelineKeys.person(entry.key);
                if (!person.equals(current)) {
                    query.add(partial, steps);
                    steps.clear();
                    current = person;
                }
                final long time = TimelineEvent.timeOf(entry.value);
                if (!query.overlaps(time, time)) {
                    continue;
                }
                final TimelineEvent event = TimelineEvent.decode(entry.value);
                query.item(time, event.event(), new TimelineEventSource(person.toString(), event, properties), now)
                        .ifPresent(item -> steps.add(new PathQuery.Step(time, item)));
            }
            query.add(partial, steps);
        }

        @Override
        public void scanBlocks(final PathQuery query, final PathQuery.Partial partial, final StoredBlocks.Source blocks,
                               final StoredBlocks.Sealed sealed, final PropertyLookup properties, final Instant now, final Runnable check,
                               final BlockAnswers answers, final Optional<String> kept, final long projectId, final int partition) {
            final List<Row> rows = new java.util.ArrayList<>();
            readBlocks(blocks, sealed, check, (block, deleted) -> {
                if (block.rows() == 0 || !query.overlaps(block.firstMicros(), block.lastMicros())) {
                    return;
                }
                final dev.eddy.trends.BlockRows source = new dev.eddy.trends.BlockRows(block, properties);
                for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
                    final long time = block.timeMicros(r);
                    final JsonNode name = block.events().value(r);
                    if (name == null || !query.overlaps(time, time)) {
                        continue;
                    }
                    final int row = r;
                    query.item(time, name.asText(), source.at(r), now)
                            .ifPresent(item -> rows.add(new Row(block.persons().textAt(row), time, rows.size(), item)));
                }
            });
            rows.sort(java.util.Comparator.comparing(Row::person).thenComparingLong(Row::timeMicros).thenComparingLong(Row::read));
            final List<PathQuery.Step> steps = new java.util.ArrayList<>();
            String current = null;
            for (final Row row : rows) {
                if (!row.person().equals(current)) {
                    query.add(partial, steps);
                    steps.clear();
                    current = row.person();
                }
                steps.add(new PathQuery.Step(row.timeMicros(), row.item()));
            }
            query.add(partial, steps);
        }

        @Override
        public boolean overlaps(final PathQuery query, final long firstMicros, final long lastMicros) {
            return query.overlaps(firstMicros, lastMicros);
        }

        @Override
        public Optional<String> shape(final PathQuery query) {
            return Optional.empty();
        }



    }

    /**
     * Funnels read the blocks ({@link FunnelQuery.BlockRowsCollector}), or, until a partition's are complete, its
     * timelines person by person (the store's key order), each in time order.
     */
    private static final class FunnelEngine extends OverPartials<FunnelQuery, FunnelQuery.Partial> {
        private final QueryParser<FunnelQuery> parser;

        FunnelEngine(final QueryParser<FunnelQuery> parser) {
            this.parser = parser;
        }

        @Override
        public FunnelQuery parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return parsed(parser, r, earliest);
        }


        @Override
        public void scan(final FunnelQuery query, final FunnelQuery.Partial partial, final KeyValueIterator<Bytes, byte[]> events,
                         final PropertyLookup properties, final Instant now, final Runnable check) {
            // Events no step or exclusion can take are skipped by name, undecoded.
            final byte[][] names = query.eventNames().map(TimelineEvent::names).orElse(null);
            eachPerson(events, check, value -> query.relevant(TimelineEvent.timeOf(value)) && (names == null || TimelineEvent.nameIn(value, names)),
                    (person, timeline) -> evaluate(query, partial, person, timeline, properties, now));
        }

        /**
         * Rows of the funnel's events collected per person from every block, then each person evaluated. A partition
         * with more than {@link #ROWS_PER_SHARE} rows in the funnel's range is read in shares of its persons, one
         * after the other, so what is held at once stays bounded however large the partition grows. A funnel whose
         * {@link FunnelQuery#progressShape shape} alone decides each person's part, over a partition that fits one
         * share, keeps its {@link FunnelProgress} between queries instead: asked again, it evaluates only the
         * persons whose rows changed. A progress dropped lately to keep the answers under their budget is not built
         * again for a while ({@link BlockAnswers#progressFits}): building it costs more than reading without one.
         */
        @Override
        public void scanBlocks(final FunnelQuery query, final FunnelQuery.Partial partial, final StoredBlocks.Source blocks,
                               final StoredBlocks.Sealed sealed, final PropertyLookup properties,
                               final Instant now, final Runnable check, final BlockAnswers answers, final Optional<String> shape,
                               final long projectId, final int partition) {
            final long rows;
            if (shape.isPresent()) {
                // One walk of the entries finds both the units to keep progress over and the rows they hold.
                final List<FunnelProgress.Unit> units = new java.util.ArrayList<>();
                final List<FunnelProgress.UnsealedBlock> tails = new java.util.ArrayList<>();
                readBlocks(blocks, sealed, check, new StoredBlocks.Visitor() {
                    @Override
                    public void block(final EventBlock block, final BitSet deleted) {
                        tails.add(new FunnelProgress.UnsealedBlock(block, deleted));
                    }

                    @Override
                    public void sealed(final long project, final long block, final BlockKeys.Sealed entry, final BitSet deleted,
                                       final StoredBlocks.Sealed source) {
                        if (query.overlaps(entry.firstMicros(), entry.lastMicros())) {
                            units.add(FunnelProgress.Unit.sealed(project, block, entry, deleted, source));
                        }
                    }

                    @Override
                    public void part(final long project, final long block, final int part, final byte[] encoded, final BitSet deleted) {
                        units.add(FunnelProgress.Unit.part(block, part, encoded, deleted));
                    }
                });
                rows = units.stream().filter(FunnelProgress.Unit::isSealed).count() * BlockKeys.ROWS;
                if (rows <= ROWS_PER_SHARE && answers.progressFits(shape.get(), projectId, partition)) {
                    answers.withProgress(shape.get(), projectId, partition, progress -> progress.read(query, units, tails, properties, now,
                            check, partial));
                    return;
                }
            } else {
                rows = sealedRows(query, blocks);
            }
            final int shares = (int) Math.max(1, (rows + ROWS_PER_SHARE - 1) / ROWS_PER_SHARE);
            for (int share = 0; share < shares; share++) {
                final FunnelQuery.BlockRowsCollector collector = query.collector(properties, now, share, shares);
                readBlocks(blocks, sealed, check, collector::add);
                check.run();
                collector.finish(partial);
            }
        }

        /** The rows of the sealed blocks whose span meets the funnel's range. */
        private static long sealedRows(final FunnelQuery query, final StoredBlocks.Source blocks) {
            long rows = 0;
            try (KeyValueIterator<Bytes, byte[]> range = blocks.entries()) {
                while (range.hasNext()) {
                    final KeyValue<Bytes, byte[]> entry = range.next();
                    if (BlockKeys.kind(entry.key) == BlockKeys.Kind.SEALED) {
                        final BlockKeys.Sealed sealed = BlockKeys.Sealed.decode(entry.value);
                        rows += query.overlaps(sealed.firstMicros(), sealed.lastMicros()) ? BlockKeys.ROWS : 0;
                    }
                }
            }
            return rows;
        }

        @Override
        public boolean overlaps(final FunnelQuery query, final long firstMicros, final long lastMicros) {
            return query.overlaps(firstMicros, lastMicros);
        }

        @Override
        public Optional<String> shape(final FunnelQuery query) {
            return query.progressShape();
        }

        private static void evaluate(final FunnelQuery query, final FunnelQuery.Partial partial, final UUID person,
                                     final List<TimelineEvent> timeline, final PropertyLookup properties, final Instant now) {
            if (person == null || timeline.isEmpty()) {
                return;
            }
            final String id = person.toString();
            query.add(partial, id, timeline, e -> new TimelineEventSource(id, e, properties), now);
        }



    }

    /**
     * A funnel correlation reads each person's whole timeline (the events it correlates are any the person sent, not
     * only the funnel's), person by person in the store's key order, each in time order: never the blocks, whose rows
     * would have to be gathered back into timelines.
     */
    private static final class CorrelationEngine extends OverPartials<FunnelCorrelationQuery, FunnelCorrelationQuery.Partial> {
        @Override
        public FunnelCorrelationQuery parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return parsed(FunnelCorrelationQuery::parse, r, earliest);
        }

        @Override
        public boolean readsBlocks() {
            return false;
        }

        @Override
        public void scan(final FunnelCorrelationQuery query, final FunnelCorrelationQuery.Partial partial,
                         final KeyValueIterator<Bytes, byte[]> events, final PropertyLookup properties, final Instant now, final Runnable check) {
            eachPerson(events, check, value -> query.relevant(TimelineEvent.timeOf(value)),
                    (person, timeline) -> evaluate(query, partial, person, timeline, properties, now));
        }

        private static void evaluate(final FunnelCorrelationQuery query, final FunnelCorrelationQuery.Partial partial, final UUID person,
                                     final List<TimelineEvent> timeline, final PropertyLookup properties, final Instant now) {
            if (person == null || timeline.isEmpty()) {
                return;
            }
            final String id = person.toString();
            query.add(partial, id, timeline, e -> new TimelineEventSource(id, e, properties), properties.person(id), now);
        }

        @Override
        public void scanBlocks(final FunnelCorrelationQuery query, final FunnelCorrelationQuery.Partial partial,
                               final StoredBlocks.Source blocks, final StoredBlocks.Sealed sealed, final PropertyLookup properties,
                               final Instant now, final Runnable check, final BlockAnswers answers, final Optional<String> kept,
                               final long projectId, final int partition) {
            throw new IllegalStateException("a funnel correlation reads the timelines, never the blocks");
        }

        @Override
        public boolean overlaps(final FunnelCorrelationQuery query, final long firstMicros, final long lastMicros) {
            return true;
        }

        @Override
        public Optional<String> shape(final FunnelCorrelationQuery query) {
            return Optional.empty();
        }
    }

    /**
     * Each person's timeline events, person by person in the store's key order, each person's in time order: those
     * {@code keep} takes (reading the stored bytes), decoded; {@code check} runs every {@link #CHECK_EVERY} entries.
     */
    private static void eachPerson(final KeyValueIterator<Bytes, byte[]> events, final Runnable check,
                                   final java.util.function.Predicate<byte[]> keep,
                                   final java.util.function.BiConsumer<UUID, List<TimelineEvent>> person) {
        UUID current = null;
        final List<TimelineEvent> timeline = new java.util.ArrayList<>();
        int seen = 0;
        while (events.hasNext()) {
            final KeyValue<Bytes, byte[]> entry = events.next();
            if (++seen % CHECK_EVERY == 0) {
                check.run();
            }
            final UUID next = TimelineKeys.person(entry.key);
            if (!next.equals(current)) {
                if (current != null) {
                    person.accept(current, timeline);
                }
                current = next;
                timeline.clear();
            }
            if (keep.test(entry.value)) {
                timeline.add(TimelineEvent.decode(entry.value));
            }
        }
        if (current != null) {
            person.accept(current, timeline);
        }
    }

    /** A kind of insight as a scatter partial over the timelines. */
    private static <Q, P> PartitionRead<P> part(final Engine<Q, P> engine, final BlockCache blocks, final BlockAnswers answers) {
        return new PartitionRead<>() {
            @Override
            public String store() {
                return StoreNames.EVENT_TIMELINES;
            }

            @Override
            public P read(final StreamsApp app, final List<Integer> partitions, final JsonNode json, final Runnable check) {
                final Request request = Request.of(json);
                final Q query = InvalidQuery.refusing(() -> engine.parse(request, request.earliest()));
                // A query too large to hold (breakdown values times intervals) is refused as PostHog's users would expect.
                try {
                    return InvalidQuery.refusing(() -> InsightEngine.read(engine, blocks, answers, query, request, app, partitions, check));
                } catch (final EventBlock.Gone e) {
                    // A block removed (every row of it moved or expired) while this read used it: read again.
                    throw new PartitionUnavailable("a block was removed while the query read it", e);
                } catch (final KeptTail.Gone e) {
                    throw new PartitionUnavailable(e.getMessage(), e);
                }
            }

            @Override
            public byte[] encode(final P partial) {
                return engine.encode(partial);
            }

            @Override
            public P decode(final JsonNode json, final byte[] bytes) {
                final Request request = Request.of(json);
                return engine.decode(InvalidQuery.refusing(() -> engine.parse(request, request.earliest())), bytes);
            }

            @Override
            public P merge(final P into, final P other) {
                return InvalidQuery.refusing(() -> engine.merge(into, other));
            }
        };
    }

    /** The project's earliest event, for {@code date_from: all}. */
    private static final class Earliest implements PartitionRead<Optional<Long>> {
        @Override
        public String store() {
            return StoreNames.EVENT_TIMELINES;
        }

        @Override
        public Optional<Long> read(final StreamsApp app, final List<Integer> partitions, final JsonNode json, final Runnable check) {
            final long projectId = Request.of(json).scope().projectId();
            Optional<Long> min = Optional.empty();
            for (final int p : partitions) {
                check.run();
                min = merge(min, TimelineScans.earliest(Stores.partition(app, StoreNames.EVENT_TIMELINES, p), projectId)
                        .map(TimelineEvent::micros));
            }
            return min;
        }

        @Override
        public byte[] encode(final Optional<Long> earliest) {
            return earliest.map(micros -> java.nio.ByteBuffer.allocate(Long.BYTES).putLong(micros).array()).orElse(new byte[0]);
        }

        @Override
        public Optional<Long> decode(final JsonNode request, final byte[] bytes) {
            return bytes.length == Long.BYTES ? Optional.of(java.nio.ByteBuffer.wrap(bytes).getLong()) : Optional.empty();
        }

        @Override
        public Optional<Long> merge(final Optional<Long> a, final Optional<Long> b) {
            return a.isEmpty() ? b : b.isEmpty() ? a : Optional.of(Math.min(a.get(), b.get()));
        }
    }

    /** That a partition's blocks held every event of its timelines in a store generation ({@link BlockKeys#COMPLETE}). */
    private record BlocksComplete(int partition, long generation) {
    }

    /** One instance's partitions of the timelines (and persons), as one partial. */
    private static <Q, P> P read(final Engine<Q, P> engine, final BlockCache cache, final BlockAnswers answers, final Q query, final Request request,
                                 final StreamsApp app, final List<Integer> partitions, final Runnable check) {
        final P partial = engine.partial(query);
        final long project = request.scope().projectId();
        final Optional<String> kept = request.keep() && answers.enabled() ? engine.shape(query) : Optional.empty();
        final ReadOnlyKeyValueStore<String, GroupState> groups = Stores.global(app, StoreNames.GROUPS_GLOBAL);
        for (final int p : partitions) {
            check.run();
            final long generation = app.storeGeneration();
            final HourlyCells hourly = new SettledHours(Stores.partition(app, StoreNames.HOURLY_COUNTS, p),
                    Stores.partition(app, StoreNames.TIMELINE_METADATA, p), answers, p, generation, System.currentTimeMillis());
            if (engine.count(query, partial, hourly, Stores.partition(app, StoreNames.UNIQUE_MARKERS, p), project)) {
                continue;
            }
            final ReadOnlyKeyValueStore<String, PersonState> persons = Stores.partition(app, StoreNames.PERSONS, p);
            final PropertyLookup properties = TimelineScans.properties(project, persons, groups);
            final ReadOnlyKeyValueStore<Bytes, byte[]> timelines = Stores.partition(app, StoreNames.EVENT_TIMELINES, p);
            final ReadOnlyKeyValueStore<Bytes, byte[]> blocks = Stores.partition(app, StoreNames.EVENT_BLOCKS, p);
            // Complete once, complete for the store's generation (only a rebuild, in a new one, starts over).
            if (engine.readsBlocks()
                    && answers.keptIfTrue(new BlocksComplete(p, generation), () -> blocks.get(BlockKeys.meta(BlockKeys.COMPLETE)) != null)) {
                try (BlockCache.Read sealed = cache.read(blocks::get, (first, last) -> engine.overlaps(query, first, last))) {
                    final BlockAnswers.Kept reads = answers.kept(project, p, generation);
                    engine.scanBlocks(query, partial, new StoredBlocks.Source(project, blocks, timelines::get, reads.tail(), reads.entries()), sealed,
                            properties, request.now(), check, answers, kept, project, p);
                }
                continue;
            }
            try (KeyValueIterator<Bytes, byte[]> events = timelines.range(TimelineKeys.projectStart(project), TimelineKeys.projectEnd(project))) {
                engine.scan(query, partial, events, properties, request.now(), check);
            }
        }
        return partial;
    }

}
