package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.flags.BoundedRegex;
import dev.eddy.flags.PropertyMatcher;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code properties} of a trend or funnel query (and of each series or step), as PostHog's query engine applies
 * them to events: a list of filters (all must match), or an {@code AND}/{@code OR} group of filters and groups, or the
 * legacy {@code {"key__operator": value}} form. Each filter reads an event, person or group property and compares it
 * the way PostHog's SQL does:
 * <ul>
 *   <li>values compare as text (the property's JSON text without quotes: {@code 10}, {@code true}), case-sensitively
 *   for {@code exact}/{@code is_not}; a list means any of them ({@code is_not}: none), an empty list matches all;</li>
 *   <li>a missing or JSON-null property matches only the negative operators ({@code is_not}, {@code not_icontains},
 *   {@code not_regex}, {@code is_not_set}, {@code not_between});</li>
 *   <li>{@code icontains} is case-insensitive; {@code regex} is an unanchored RE2 search within RE2's bounds ({@link BoundedRegex}:
 *   linear time, no pattern can hang a query), an invalid pattern matches nothing;</li>
 *   <li>{@code gt}, {@code gte} ({@code min}), {@code lt}, {@code lte} ({@code max}), {@code between},
 *   {@code not_between} compare numbers; a property that is not a number does not match;</li>
 *   <li>date and semver operators as feature flags evaluate them.</li>
 * </ul>
 */
public final class PropertyFilter {
    /** Matches every event (no filters). */
    public static final PropertyFilter NONE = new PropertyFilter(new Group(true, List.of()));

    private final Node root;

    private PropertyFilter(final Node root) {
        this.root = root;
    }

    /** Where a filter reads its property from. */
    public interface Source {
        /** The event's property, or null. */
        JsonNode event(String key);

        /** The person's property, or null. */
        JsonNode person(String key);

        /** The property of the event's group of that type index, or null. */
        JsonNode group(int typeIndex, String key);

        /** The event's name, or null where the source does not know it (a property value alone). */
        default String eventName() {
            return null;
        }

        /** The distinct ids of the event's person (a static cohort's members are distinct ids); none where unknown. */
        default List<String> personDistinctIds() {
            return List.of();
        }

        /** A person alone, as cohorts read one: its properties and its distinct ids; no event or group. */
        static Source ofPerson(final JsonNode properties, final List<String> distinctIds) {
            return new Source() {
                @Override
                public JsonNode event(final String key) {
                    return null;
                }

                @Override
                public JsonNode person(final String key) {
                    return properties.get(key);
                }

                @Override
                public JsonNode group(final int typeIndex, final String key) {
                    return null;
                }

                @Override
                public List<String> personDistinctIds() {
                    return distinctIds;
                }
            };
        }

        /** An event's properties alone: no person or group properties. */
        static Source ofEvent(final JsonNode properties) {
            return new Source() {
                @Override
                public JsonNode event(final String key) {
                    return properties.get(key);
                }

                @Override
                public JsonNode person(final String key) {
                    return null;
                }

                @Override
                public JsonNode group(final int typeIndex, final String key) {
                    return null;
                }
            };
        }
    }

    /**
     * A URL without its trailing {@code /}, {@code ?} and {@code #} ({@code "/"} when nothing is left), as PostHog's
     * {@code breakdown_normalize_url} cuts breakdown values. A loop, not {@code replaceAll("[/?#]*$", "")}: that regex
     * retries from every position of a long run of separators that is not at the end, quadratic time on a hostile
     * property value (seconds for 40 kB).
     */
    public static String withoutTrailingUrlSeparators(final String text) {
        int end = text.length();
        while (end > 0 && "/?#".indexOf(text.charAt(end - 1)) >= 0) {
            end--;
        }
        return end == 0 ? "/" : text.substring(0, end);
    }

    /**
     * @param properties the query's {@code properties}: null, a list, a group, or the legacy object form
     * @throws IllegalArgumentException on a filter PostHog would refuse (no key, an unknown type or operator)
     */
    public static PropertyFilter parse(final JsonNode properties) {
        if (properties == null || properties.isNull() || properties.isMissingNode()) {
            return NONE;
        }
        return new PropertyFilter(node(properties, true));
    }

    /**
     * A condition of Eddy's own making over an event (an action's step parts: its event name, its URL, its
     * autocapture elements), combined with property filters by {@link #of}, {@link #anyOf} and {@link #and}.
     */
    public interface Condition {
        boolean test(Source source);

        /** The event property keys it reads. */
        java.util.Set<String> eventKeys();

        /** Whether it reads the event's name ({@link Source#eventName}). */
        boolean readsEventName();

        /** What it asks, written out: equal texts for equal conditions (kept answers are keyed by them). */
        String describe();
    }

    /** A filter of one condition. */
    public static PropertyFilter of(final Condition condition) {
        return new PropertyFilter(new Custom(condition));
    }

    /** A filter matching what any of {@code filters} matches (none: nothing). */
    public static PropertyFilter anyOf(final List<PropertyFilter> filters) {
        return new PropertyFilter(filters.isEmpty() ? new Custom(NOTHING) : new Group(false, filters.stream().map(f -> f.root).toList()));
    }

    /** A filter matching what all of {@code filters} match (none: everything). */
    public static PropertyFilter allOf(final List<PropertyFilter> filters) {
        return new PropertyFilter(new Group(true, filters.stream().map(f -> f.root).toList()));
    }

    private static final Condition NOTHING = new Condition() {
        @Override
        public boolean test(final Source source) {
            return false;
        }

        @Override
        public java.util.Set<String> eventKeys() {
            return java.util.Set.of();
        }

        @Override
        public boolean readsEventName() {
            return false;
        }

        @Override
        public String describe() {
            return "nothing";
        }
    };

    private record Custom(Condition condition) implements Node {
        @Override
        public boolean test(final Source source, final Instant now) {
            return condition.test(source);
        }

        @Override
        public boolean keys(final java.util.Set<String> eventKeys) {
            eventKeys.addAll(condition.eventKeys());
            return false;
        }

        @Override
        public boolean readsEventName() {
            return condition.readsEventName();
        }

        @Override
        public String toString() {
            return condition.describe();
        }
    }

    /** Both filters (global properties and a series' own, say). */
    public PropertyFilter and(final PropertyFilter other) {
        return new PropertyFilter(new Group(true, List.of(root, other.root)));
    }

    public boolean test(final Source source, final Instant now) {
        return root.test(source, now);
    }

    /** Whether this filter has no condition at all (only empty groups), so it matches every event. */
    public boolean matchesEverything() {
        return unconditional(root);
    }

    private static boolean unconditional(final Node node) {
        return node instanceof Group group && group.children().stream().allMatch(PropertyFilter::unconditional);
    }

    private interface Node {
        boolean test(Source source, Instant now);

        /** Adds the event property keys this node reads to {@code eventKeys}; true when it reads a person's or group's. */
        boolean keys(java.util.Set<String> eventKeys);

        /** Whether it reads the event's name, which is not among its properties. */
        default boolean readsEventName() {
            return false;
        }
    }

    /** Whether the filter reads the event's name ({@link Source#eventName}) besides properties. */
    public boolean readsEventName() {
        return root.readsEventName();
    }

    /** The event property keys the filter reads. */
    public java.util.Set<String> eventKeys() {
        final java.util.Set<String> keys = new java.util.TreeSet<>();
        root.keys(keys);
        return keys;
    }

    /** The conditions, written out: equal texts for equal filters. */
    @Override
    public String toString() {
        return root.toString();
    }

    /** Whether the filter reads a person's or a group's properties (which are not among the event's). */
    public boolean readsPersonsOrGroups() {
        return root.keys(new java.util.HashSet<>());
    }

    /**
     * Whether what the filter answers for an event depends on the event alone: no person or group property (those
     * change after the event), no date compared with the moment of the query ({@code is_date_before: -7d}).
     */
    public boolean fixedByEvent() {
        return !readsPersonsOrGroups() && !readsTheClock(root);
    }

    private static boolean readsTheClock(final Node node) {
        return node instanceof Group group ? group.children().stream().anyMatch(PropertyFilter::readsTheClock)
                : node instanceof Not not ? readsTheClock(not.node())
                : node instanceof Leaf leaf && leaf.operator().startsWith("is_date_");
    }

    private record Group(boolean all, List<Node> children) implements Node {
        @Override
        public boolean test(final Source source, final Instant now) {
            if (children.isEmpty()) {
                return true;
            }
            for (final Node child : children) {
                if (child.test(source, now) != all) {
                    return !all;
                }
            }
            return all;
        }

        @Override
        public boolean keys(final java.util.Set<String> eventKeys) {
            boolean others = false;
            for (final Node child : children) {
                others |= child.keys(eventKeys);
            }
            return others;
        }

        @Override
        public boolean readsEventName() {
            return children.stream().anyMatch(Node::readsEventName);
        }

        @Override
        public String toString() {
            return (all ? "AND" : "OR") + children;
        }
    }

    private record Leaf(String type, String key, String operator, JsonNode value, int groupTypeIndex) implements Node {
        @Override
        public boolean test(final Source source, final Instant now) {
            final JsonNode actual = switch (type) {
                case "person" -> source.person(key);
                case "group" -> source.group(groupTypeIndex, key);
                default -> source.event(key);
            };
            return matches(operator, value, actual == null || actual.isNull() || actual.isMissingNode() ? null : actual, now);
        }

        @Override
        public boolean keys(final java.util.Set<String> eventKeys) {
            if ("event".equals(type)) {
                eventKeys.add(key);
                return false;
            }
            return true;
        }

        /** As JSON, so that no key or value can make two different conditions read alike. */
        @Override
        public String toString() {
            final com.fasterxml.jackson.databind.node.ObjectNode json = JsonNodeFactory.instance.objectNode();
            json.put("type", type).put("key", key).put("operator", operator).put("group_type_index", groupTypeIndex).set("value", value);
            return json.toString();
        }
    }

    /** @param top whether this is the query's {@code properties} itself (the only place the legacy form may be) */
    private static Node node(final JsonNode json, final boolean top) {
        if (json.isArray()) {
            final List<Node> children = new ArrayList<>();
            json.forEach(child -> children.add(node(child, false)));
            return new Group(true, children);
        }
        if (!json.isObject()) {
            throw new IllegalArgumentException("properties must be a list of filters or a group");
        }
        if (json.has("values") && (json.path("type").asText().equalsIgnoreCase("AND") || json.path("type").asText().equalsIgnoreCase("OR"))) {
            final List<Node> children = new ArrayList<>();
            json.get("values").forEach(child -> children.add(node(child, false)));
            return new Group(json.get("type").asText().equalsIgnoreCase("AND"), children);
        }
        if (json.has("key") || !top) {
            return leaf(json);
        }
        // Legacy form: {"$browser__icontains": "chrome", "plan": "pro"}, all event properties.
        final List<Node> children = new ArrayList<>();
        for (final Iterator<Map.Entry<String, JsonNode>> it = json.fields(); it.hasNext();) {
            final Map.Entry<String, JsonNode> field = it.next();
            final int split = field.getKey().lastIndexOf("__");
            final String key = split > 0 ? field.getKey().substring(0, split) : field.getKey();
            final String operator = split > 0 ? field.getKey().substring(split + 2) : "exact";
            children.add(new Leaf("event", key, checkedOperator(operator), field.getValue(), 0));
        }
        return new Group(true, children);
    }

    private static Node leaf(final JsonNode json) {
        final String key = json.path("key").asText("");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("every property filter needs a key");
        }
        String type = json.path("type").asText("event").toLowerCase(Locale.ROOT);
        if ("events".equals(type)) {
            type = "event";
        }
        if ("cohort".equals(type)) {
            return cohort(json);
        }
        if (!List.of("event", "person", "group").contains(type)) {
            throw new IllegalArgumentException("property filters of type '" + type + "' are not supported");
        }
        final int groupIndex = json.path("group_type_index").asInt(-1);
        if ("group".equals(type) && (groupIndex < 0 || groupIndex > 4)) {
            throw new IllegalArgumentException("a group property filter needs a group_type_index from 0 to 4");
        }
        final String operator = json.path("operator").isTextual() ? json.get("operator").asText() : "exact";
        JsonNode value = json.has("value") ? json.get("value") : json.get("values");
        if (value != null && value.isArray()) {
            // PostHog drops nulls from list values.
            final ArrayNode cleaned = JsonNodeFactory.instance.arrayNode();
            value.forEach(v -> {
                if (!v.isNull()) {
                    cleaned.add(v);
                }
            });
            value = cleaned;
        }
        return new Leaf(type, key, checkedOperator(operator), value, groupIndex);
    }

    /**
     * A person's membership of a cohort ({@code {"key": "id", "type": "cohort", "value": 5}}), from the definition the
     * gateway inlined under {@link Cohort#INLINED}; {@code negation} or {@code operator: not_in} ask for the persons
     * outside it.
     */
    private static Node cohort(final JsonNode json) {
        final Cohort cohort = Cohort.ofFilter(json);
        final boolean outside = json.path("negation").asBoolean(false) || "not_in".equals(json.path("operator").asText());
        final Node member = new Membership(cohort);
        return outside ? new Not(member) : member;
    }

    /** The opposite of a node. */
    private record Not(Node node) implements Node {
        @Override
        public boolean test(final Source source, final Instant now) {
            return !node.test(source, now);
        }

        @Override
        public boolean keys(final java.util.Set<String> eventKeys) {
            return node.keys(eventKeys);
        }

        @Override
        public boolean readsEventName() {
            return node.readsEventName();
        }

        @Override
        public String toString() {
            return "NOT" + node;
        }
    }

    /** Whether the event's person is in a cohort (its definition read as of the query). */
    private record Membership(Cohort cohort) implements Node {
        @Override
        public boolean test(final Source source, final Instant now) {
            return cohort.contains(source, now);
        }

        @Override
        public boolean keys(final java.util.Set<String> eventKeys) {
            return true;
        }

        @Override
        public String toString() {
            return "cohort" + cohort;
        }
    }

    /** A filter of person properties alone: what a dynamic cohort's {@code properties} are. */
    static PropertyFilter ofPersons(final JsonNode group) {
        return new PropertyFilter(personNode(group));
    }

    /** A cohort's condition tree: groups, person leaves (each may be negated), cohort leaves. */
    private static Node personNode(final JsonNode json) {
        if (json.isObject() && json.has("values") && List.of("AND", "OR").contains(json.path("type").asText().toUpperCase(Locale.ROOT))) {
            final List<Node> children = new ArrayList<>();
            json.get("values").forEach(child -> children.add(personNode(child)));
            return new Group(json.get("type").asText().equalsIgnoreCase("AND"), children);
        }
        if (json.isArray()) {
            final List<Node> children = new ArrayList<>();
            json.forEach(child -> children.add(personNode(child)));
            return new Group(true, children);
        }
        if (!json.isObject()) {
            throw new IllegalArgumentException("a cohort's properties are groups of property filters");
        }
        final String type = json.path("type").asText("person");
        if ("cohort".equals(type)) {
            return cohort(json);
        }
        if (!"person".equals(type)) {
            throw new IllegalArgumentException("cohort filters of type '" + type + "' are not supported by Eddy yet");
        }
        final ObjectNode person = ((ObjectNode) json).deepCopy();
        person.put("type", "person");
        final Node leaf = leaf(person);
        return json.path("negation").asBoolean(false) ? new Not(leaf) : leaf;
    }

    private static final List<String> OPERATORS = List.of("exact", "is_not", "icontains", "not_icontains", "regex", "not_regex",
            "gt", "gte", "lt", "lte", "min", "max", "between", "not_between", "is_set", "is_not_set", "is_date_exact",
            "is_date_before", "is_date_after", "in", "not_in");

    private static String checkedOperator(final String operator) {
        if (!OPERATORS.contains(operator) && !operator.startsWith("semver_")) {
            throw new IllegalArgumentException("operator '" + operator + "' is not supported");
        }
        return operator;
    }

    static boolean matches(final String operator, final JsonNode value, final JsonNode actual, final Instant now) {
        switch (operator) {
            case "is_set":
                return actual != null;
            case "is_not_set":
                return actual == null;
            case "exact", "in":
                return actual != null && anyOf(value, v -> text(v).equals(text(actual)), true);
            case "is_not", "not_in":
                return actual == null || !anyOf(value, v -> text(v).equals(text(actual)), false);
            case "icontains":
                return actual != null && anyOf(value, v -> lower(actual).contains(lower(v)), true);
            case "not_icontains":
                return actual == null || !anyOf(value, v -> lower(actual).contains(lower(v)), false);
            case "regex":
                return actual != null && anyOf(value, v -> find(v, actual).orElse(false), true);
            case "not_regex":
                return actual == null || !anyOf(value, v -> find(v, actual).orElse(false), false);
            case "gt":
                return compare(actual, value).map(c -> c > 0).orElse(false);
            case "gte", "min":
                return compare(actual, value).map(c -> c >= 0).orElse(false);
            case "lt":
                return compare(actual, value).map(c -> c < 0).orElse(false);
            case "lte", "max":
                return compare(actual, value).map(c -> c <= 0).orElse(false);
            case "between":
                return between(actual, value).orElse(false);
            case "not_between":
                return between(actual, value).map(in -> !in).orElse(true);
            default:
                // Dates and semver: as feature flags evaluate them.
                return actual != null && PropertyMatcher.matches(operator, value, actual, now);
        }
    }

    /** Any of the listed values (one value is a list of one); an empty list matches as {@code empty}. */
    private static boolean anyOf(final JsonNode values, final java.util.function.Predicate<JsonNode> test, final boolean empty) {
        if (values == null) {
            return false;
        }
        if (!values.isArray()) {
            return test.test(values);
        }
        if (values.isEmpty()) {
            return empty;
        }
        for (final JsonNode v : values) {
            if (test.test(v)) {
                return true;
            }
        }
        return false;
    }

    /** The property's text as PostHog's SQL sees it: strings without quotes, anything else as JSON. */
    static String text(final JsonNode node) {
        return node.isTextual() ? node.asText() : node.toString();
    }

    private static String lower(final JsonNode node) {
        return text(node).toLowerCase(Locale.ROOT);
    }

    private static Optional<Boolean> find(final JsonNode pattern, final JsonNode actual) {
        return BoundedRegex.find(text(pattern), text(actual));
    }

    private static Optional<Integer> compare(final JsonNode actual, final JsonNode value) {
        final Optional<Double> a = number(actual);
        final Optional<Double> b = number(value);
        return a.isPresent() && b.isPresent() ? Optional.of(Double.compare(a.get(), b.get())) : Optional.empty();
    }

    private static Optional<Boolean> between(final JsonNode actual, final JsonNode range) {
        final Optional<Double> a = number(actual);
        if (a.isEmpty() || range == null || !range.isArray() || range.size() != 2) {
            return Optional.empty();
        }
        final Optional<Double> min = number(range.get(0));
        final Optional<Double> max = number(range.get(1));
        if (min.isEmpty() || max.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(a.get() >= min.get() && a.get() <= max.get());
    }

    /** A number, or a string holding one (PostHog's {@code toFloat}); anything else is no number. */
    static Optional<Double> number(final JsonNode node) {
        if (node == null || node.isNull()) {
            return Optional.empty();
        }
        if (node.isNumber()) {
            return Optional.of(node.asDouble());
        }
        if (node.isTextual()) {
            try {
                final double parsed = Double.parseDouble(node.asText().trim());
                return Double.isFinite(parsed) ? Optional.of(parsed) : Optional.empty();
            } catch (final NumberFormatException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }
}
