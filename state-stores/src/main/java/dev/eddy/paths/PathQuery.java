package dev.eddy.paths;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.eddy.flags.BoundedRegex;
import dev.eddy.insights.Mergeable;
import dev.eddy.insights.PartialQuery;
import dev.eddy.serde.Binary;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.DateRange;
import dev.eddy.trends.Interval;
import dev.eddy.trends.PropertyFilter;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * PostHog's paths insight ({@code insight: PATHS}; the legacy {@code /insights/path/} answer): the steps persons take
 * from event to event, as edges between numbered steps ({@code 1_/home} → {@code 2_/pricing}) with how many times each
 * was taken and the average time it took. Per person, in time order:
 * <ol>
 *   <li>the events of the included types ({@code include_event_types}: {@code $pageview}, {@code $screen},
 *   {@code custom_event}, every event when none; {@code include_custom_events} by name) in the range and the
 *   filters, each as its path item: a pageview's {@code $current_url} without one trailing {@code /}, a screen's
 *   {@code $screen_name}, another event's name; cleaned ({@code local_path_cleaning_filters}), grouped
 *   ({@code path_groupings}, {@code *} any text: an item a pattern finds becomes the pattern) and, if in
 *   {@code exclude_events}, left out;</li>
 *   <li>split into sessions where 30 minutes or more pass between events;</li>
 *   <li>each session without repeats in a row (the last of a run kept, with its time), cut from its first
 *   {@code start_point} and after its first {@code end_point} (sessions without them left out), and to
 *   {@code step_limit} steps (the first ones; the last ones with an end point; with both, head {@code ...} tail);</li>
 *   <li>each pair of consecutive steps an edge.</li>
 * </ol>
 * Edges count session paths, not persons. The whole keeps those within {@code min_edge_weight} and
 * {@code max_edge_weight}, the most taken first (then by source and target as bytes), up to {@code edge_limit}, and
 * only edges reachable from a first step. Each instance counts the persons of its partitions ({@link #add}); the
 * partials add up.
 */
public final class PathQuery implements PartialQuery<PathQuery.Partial> {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final long SESSION_MICROS = 30L * 60 * 1_000_000;
    private static final int DEFAULT_STEPS = 5;
    private static final int DEFAULT_EDGES = 50;
    private static final int MAX_STEPS = 100;
    private static final byte PARTIAL_VERSION = 1;

    /** One event of a person as a path step: when, and its path item. */
    public record Step(long timeMicros, String item) {
    }

    private final DateRange range;
    private final long fromMicros;
    private final long toMicros;
    /** No event types named: every event is a step. */
    private final boolean all;
    private final boolean pageviews;
    private final boolean screens;
    private final boolean customEvents;
    private final Set<String> namedEvents;
    private final PropertyFilter filter;
    private final List<Map.Entry<Pattern, String>> cleaning;
    private final List<Map.Entry<Pattern, String>> groupings;
    private final Set<String> excluded;
    private final Optional<String> start;
    private final Optional<String> end;
    private final int steps;
    private final Optional<Integer> edgeLimit;
    private final Optional<Long> minWeight;
    private final Optional<Long> maxWeight;

    @SuppressWarnings("checkstyle:ParameterNumber")
    private PathQuery(final DateRange range, final boolean empty, final boolean all, final boolean pageviews, final boolean screens, final boolean customEvents, final Set<String> namedEvents,
                      final PropertyFilter filter, final List<Map.Entry<Pattern, String>> cleaning, final List<Map.Entry<Pattern, String>> groupings,
                      final Set<String> excluded, final Optional<String> start, final Optional<String> end, final int steps,
                      final Optional<Integer> edgeLimit, final Optional<Long> minWeight, final Optional<Long> maxWeight) {
        this.range = range;
        this.fromMicros = empty ? Long.MAX_VALUE : TimelineEvent.micros(range.from().toInstant());
        this.toMicros = empty ? Long.MIN_VALUE : TimelineEvent.micros(range.to().toInstant());
        this.all = all;
        this.pageviews = pageviews;
        this.screens = screens;
        this.customEvents = customEvents;
        this.namedEvents = namedEvents;
        this.filter = filter;
        this.cleaning = cleaning;
        this.groupings = groupings;
        this.excluded = excluded;
        this.start = start;
        this.end = end;
        this.steps = steps;
        this.edgeLimit = edgeLimit;
        this.minWeight = minWeight;
        this.maxWeight = maxWeight;
    }

    /**
     * @param query the legacy filter
     * @throws IllegalArgumentException naming what is wrong with the query, or what Eddy does not answer yet
     */
    public static PathQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                  final Instant now, final Supplier<Optional<Instant>> earliest) {
        if (!query.isObject()) {
            throw new IllegalArgumentException("a paths query must be an object");
        }
        for (final String refused : List.of("funnel_paths", "funnel_filter", "paths_hogql_expression")) {
            if (query.hasNonNull(refused) && !(query.get(refused).isTextual() && query.get(refused).asText().isEmpty())) {
                throw new IllegalArgumentException(refused + " is not supported by Eddy yet");
            }
        }
        boolean empty = false;
        final List<String> types = texts(query.get("include_event_types"), "include_event_types");
        if (types.isEmpty() && query.path("path_type").isTextual()) {
            types.add(query.get("path_type").asText());
        }
        for (final String type : types) {
            if ("hogql".equals(type)) {
                throw new IllegalArgumentException("include_event_types hogql is not supported by Eddy yet");
            }
            if (!List.of("$pageview", "$screen", "custom_event").contains(type)) {
                throw new IllegalArgumentException("include_event_types are $pageview, $screen and custom_event; got '" + type + "'");
            }
        }
        final Set<String> named = new HashSet<>(texts(query.get("include_custom_events"), "include_custom_events"));
        if (!named.isEmpty() && types.contains("custom_event")) {
            throw new IllegalArgumentException("include_custom_events cannot be combined with include_event_types custom_event");
        }
        final boolean all = types.isEmpty() && named.isEmpty();
        DateRange range;
        try {
            range = DateRange.resolve(text(query.get("date_from")), text(query.get("date_to")), Interval.DAY, zone, weekStart, now, earliest);
        } catch (final IllegalArgumentException e) {
            if (!e.getMessage().startsWith("date_to is before date_from")) {
                throw e;
            }
            // PostHog answers a range that ends before it starts with no paths.
            final java.time.ZonedDateTime at = now.atZone(zone);
            range = new DateRange(at, at, Interval.DAY, weekStart);
            empty = true;
        }
        PropertyFilter filter = PropertyFilter.parse(query.get("properties"));
        if (query.path("filter_test_accounts").asBoolean(false) && testAccountFilters != null && testAccountFilters.isArray()) {
            filter = filter.and(PropertyFilter.parse(testAccountFilters));
        }
        final List<Map.Entry<Pattern, String>> cleaning = new ArrayList<>();
        for (final JsonNode rule : iterable(query.get("local_path_cleaning_filters"), "local_path_cleaning_filters")) {
            final String regex = rule.path("regex").asText("");
            cleaning.add(Map.entry(BoundedRegex.compile(regex)
                    .orElseThrow(() -> new IllegalArgumentException("local_path_cleaning_filters: '" + regex + "' is not a valid regular expression")),
                    rule.path("alias").asText("").replaceAll("\\\\(\\d)", "\\$$1")));
        }
        final List<Map.Entry<Pattern, String>> groupings = new ArrayList<>();
        for (final String grouping : texts(query.get("path_groupings"), "path_groupings")) {
            final List<String> parts = new ArrayList<>();
            for (final String part : grouping.split("\\*", -1)) {
                parts.add(Pattern.quote(part));
            }
            groupings.add(Map.entry(Pattern.compile(String.join(".*", parts)), grouping));
        }
        final Optional<String> start = text(query.get("start_point")).map(PathQuery::withoutTrailingSlash);
        final Optional<String> end = text(query.get("end_point")).map(PathQuery::withoutTrailingSlash);
        final int steps = query.hasNonNull("step_limit") && query.get("step_limit").asInt(0) > 0 ? query.get("step_limit").asInt() : DEFAULT_STEPS;
        if (steps > MAX_STEPS) {
            throw new IllegalArgumentException("step_limit is at most " + MAX_STEPS);
        }
        final Optional<Long> min = number(query.get("min_edge_weight"));
        final Optional<Long> max = number(query.get("max_edge_weight"));
        if (min.isPresent() && max.isPresent() && max.get() < min.get()) {
            throw new IllegalArgumentException("Max Edge weight can't be lower than min edge weight");
        }
        final Optional<Integer> edges = query.hasNonNull("edge_limit") ? Optional.of(query.get("edge_limit").asInt(DEFAULT_EDGES))
                : start.isPresent() && end.isPresent() ? Optional.empty() : Optional.of(DEFAULT_EDGES);
        return new PathQuery(range, empty, all, all || types.contains("$pageview"), all || types.contains("$screen"), all || types.contains("custom_event"),
                named, filter, cleaning, groupings, new HashSet<>(texts(query.get("exclude_events"), "exclude_events")), start, end, steps,
                edges, min, max);
    }

    public DateRange range() {
        return range;
    }

    /** Whether events between the two moments (microseconds) may be steps. */
    public boolean overlaps(final long firstMicros, final long lastMicros) {
        return lastMicros >= fromMicros && firstMicros <= toMicros;
    }

    /**
     * The path item of an event, if it is a step: an event of an included type, in the range, matching the filters,
     * not excluded.
     */
    public Optional<String> item(final long timeMicros, final String event, final PropertyFilter.Source source, final Instant now) {
        if (timeMicros < fromMicros || timeMicros > toMicros) {
            return Optional.empty();
        }
        final boolean pageview = "$pageview".equals(event);
        final boolean screen = "$screen".equals(event);
        final boolean included = all || (pageview ? pageviews : screen ? screens
                : namedEvents.contains(event) || customEvents && !event.startsWith("$"));
        if (!included || !filter.test(source, now)) {
            return Optional.empty();
        }
        String item;
        if (pageview && pageviews) {
            item = withoutTrailingSlash(text(source.event("$current_url")).orElse(""));
        } else if (screen && screens) {
            item = text(source.event("$screen_name")).orElse("");
        } else {
            item = event;
        }
        for (final Map.Entry<Pattern, String> rule : cleaning) {
            item = rule.getKey().matcher(item).replaceAll(rule.getValue());
        }
        item = grouped(item);
        return excluded.contains(item) ? Optional.empty() : Optional.of(item);
    }

    /** The pattern that finds {@code item} first (earliest end of its match), or the item itself. */
    private String grouped(final String item) {
        String best = item;
        int bestEnd = Integer.MAX_VALUE;
        for (final Map.Entry<Pattern, String> grouping : groupings) {
            final Matcher m = grouping.getKey().matcher(item);
            if (m.find() && m.end() < bestEnd) {
                bestEnd = m.end();
                best = grouping.getValue();
            }
        }
        return best;
    }

    @Override
    public Partial partial() {
        return new Partial(new LinkedHashMap<>());
    }

    /** Adds one person's steps, in time order, to {@code partial}. */
    public void add(final Partial partial, final List<Step> person) {
        List<Step> session = new ArrayList<>();
        for (final Step step : person) {
            if (!session.isEmpty() && step.timeMicros() - session.get(session.size() - 1).timeMicros() >= SESSION_MICROS) {
                addSession(partial, session);
                session = new ArrayList<>();
            }
            session.add(step);
        }
        addSession(partial, session);
    }

    private void addSession(final Partial partial, final List<Step> session) {
        // Repeats in a row: the last of each run stays (a trailing empty item goes, as PostHog's sentinel takes it).
        final List<Step> compact = new ArrayList<>();
        for (int i = 0; i < session.size(); i++) {
            final String next = i + 1 < session.size() ? session.get(i + 1).item() : "";
            if (!session.get(i).item().equals(next)) {
                compact.add(session.get(i));
            }
        }
        List<Step> path = compact;
        if (start.isPresent()) {
            final int at = indexOf(path, start.get());
            if (at < 0) {
                return;
            }
            path = path.subList(at, path.size());
        }
        if (end.isPresent()) {
            final int at = indexOf(path, end.get());
            if (at < 0) {
                return;
            }
            path = path.subList(0, at + 1);
        }
        path = limited(path);
        for (int i = 1; i < path.size(); i++) {
            final String key = (i) + "_" + path.get(i - 1).item() + "\u0000" + (i + 1) + "_" + path.get(i).item();
            final double[] edge = partial.edges.computeIfAbsent(key, k -> new double[2]);
            edge[0]++;
            edge[1] += (path.get(i).timeMicros() - path.get(i - 1).timeMicros()) / 1000.0;
        }
    }

    private List<Step> limited(final List<Step> path) {
        if (path.size() <= steps) {
            return path;
        }
        if (start.isPresent() && end.isPresent()) {
            final int half = steps / 2;
            final List<Step> cut = new ArrayList<>(path.subList(0, half));
            cut.add(new Step(path.get(half).timeMicros(), "..."));
            cut.addAll(path.subList(path.size() - half, path.size()));
            return cut;
        }
        return end.isPresent() ? path.subList(path.size() - steps, path.size()) : path.subList(0, steps);
    }

    private static int indexOf(final List<Step> path, final String item) {
        for (int i = 0; i < path.size(); i++) {
            if (path.get(i).item().equals(item)) {
                return i;
            }
        }
        return -1;
    }

    /** PostHog's result: {@code [{source, target, value, average_conversion_time}]}. */
    @Override
    public ArrayNode result(final Partial whole) {
        final List<Map.Entry<String, double[]>> edges = new ArrayList<>();
        whole.edges.forEach((key, edge) -> {
            final long value = (long) edge[0];
            if (minWeight.map(m -> value >= m).orElse(true) && maxWeight.map(m -> value <= m).orElse(true)) {
                edges.add(Map.entry(key, edge));
            }
        });
        edges.sort((a, b) -> {
            final int byValue = Double.compare(b.getValue()[0], a.getValue()[0]);
            return byValue != 0 ? byValue : Arrays.compareUnsigned(a.getKey().getBytes(StandardCharsets.UTF_8), b.getKey().getBytes(StandardCharsets.UTF_8));
        });
        final List<Map.Entry<String, double[]>> kept = edgeLimit.map(l -> edges.subList(0, Math.min(l, edges.size()))).orElse(edges);
        // Only the edges a first step reaches, as PostHog keeps them.
        final Map<String, List<String>> next = new HashMap<>();
        final Deque<String> stack = new ArrayDeque<>();
        for (final Map.Entry<String, double[]> edge : kept) {
            final String[] ends = edge.getKey().split("\u0000", 2);
            next.computeIfAbsent(ends[0], k -> new ArrayList<>()).add(ends[1]);
            if (ends[0].startsWith("1_")) {
                stack.push(ends[0]);
            }
        }
        final Set<String> seen = new HashSet<>();
        while (!stack.isEmpty()) {
            final String node = stack.pop();
            if (seen.add(node)) {
                next.getOrDefault(node, List.of()).forEach(stack::push);
            }
        }
        final ArrayNode result = NODES.arrayNode();
        for (final Map.Entry<String, double[]> edge : kept) {
            final String[] ends = edge.getKey().split("\u0000", 2);
            if (seen.contains(ends[0])) {
                final ObjectNode item = result.addObject();
                item.put("source", ends[0]);
                item.put("target", ends[1]);
                item.put("value", (long) edge.getValue()[0]);
                item.put("average_conversion_time", edge.getValue()[1] / edge.getValue()[0]);
            }
        }
        return result;
    }

    /** A partial from {@link Partial#encode}. */
    @Override
    public Partial decode(final byte[] bytes) {
        return Binary.read(bytes, PARTIAL_VERSION, "a paths partial", in -> {
            final int size = in.readInt();
            final Map<String, double[]> edges = new LinkedHashMap<>();
            for (int i = 0; i < size; i++) {
                final byte[] key = new byte[in.readInt()];
                in.readFully(key);
                edges.put(new String(key, StandardCharsets.UTF_8), new double[] {in.readDouble(), in.readDouble()});
            }
            return new Partial(edges);
        });
    }

    /** Some persons' edges: per source and target, how many times taken and the milliseconds it took in all. */
    public static final class Partial implements Mergeable<Partial> {
        private final Map<String, double[]> edges;

        private Partial(final Map<String, double[]> edges) {
            this.edges = edges;
        }

        @Override
        public Partial merge(final Partial other) {
            other.edges.forEach((key, edge) -> {
                final double[] into = edges.computeIfAbsent(key, k -> new double[2]);
                into[0] += edge[0];
                into[1] += edge[1];
            });
            return this;
        }

        @Override
        public byte[] encode() {
            return Binary.write(PARTIAL_VERSION, out -> {
                out.writeInt(edges.size());
                for (final Map.Entry<String, double[]> edge : edges.entrySet()) {
                    final byte[] key = edge.getKey().getBytes(StandardCharsets.UTF_8);
                    out.writeInt(key.length);
                    out.write(key);
                    out.writeDouble(edge.getValue()[0]);
                    out.writeDouble(edge.getValue()[1]);
                }
            });
        }
    }

    /** A URL without one trailing {@code /}, unless it is only {@code /}. */
    static String withoutTrailingSlash(final String url) {
        return url.length() > 1 && url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    private static Optional<String> text(final JsonNode node) {
        return node == null || node.isNull() || node.isContainerNode() || node.asText().isEmpty() ? Optional.empty() : Optional.of(node.asText());
    }

    private static Optional<Long> number(final JsonNode node) {
        return node == null || node.isNull() || !node.canConvertToLong() || node.asLong() == 0 ? Optional.empty() : Optional.of(node.asLong());
    }

    private static Iterable<JsonNode> iterable(final JsonNode node, final String name) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw new IllegalArgumentException(name + " must be a list");
        }
        return node;
    }

    private static List<String> texts(final JsonNode node, final String name) {
        final List<String> texts = new ArrayList<>();
        JsonNode list = node;
        if (node != null && node.isTextual() && node.asText().trim().startsWith("[")) {
            try {
                list = new com.fasterxml.jackson.databind.ObjectMapper().readTree(node.asText());
            } catch (final com.fasterxml.jackson.core.JacksonException e) {
                throw new IllegalArgumentException(name + " is not valid JSON");
            }
        }
        for (final JsonNode item : iterable(list, name)) {
            texts.add(item.asText());
        }
        return texts;
    }
}
