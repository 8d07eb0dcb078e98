package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Pattern;
import dev.eddy.flags.BoundedRegex;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A PostHog action as a query matches events against it: any of its steps, each step all of its parts, as PostHog's
 * {@code action_to_expr} has them.
 * <ul>
 *   <li>{@code event}: the event's name (none or empty: any event);</li>
 *   <li>{@code url} on {@code $current_url}: {@code url_matching} {@code exact}, {@code regex} (RE2, unanchored) or
 *   {@code contains} (the default: SQL {@code LIKE '%url%'}, case-sensitive, {@code %} and {@code _} wildcards);</li>
 *   <li>on {@code $autocapture} events only, the elements ({@link ElementsChain}): {@code selector} ({@link Selector}),
 *   {@code tag_name}, {@code href} (the first element's with one: {@code exact} by default, {@code contains}
 *   case-insensitive, {@code regex}), {@code text} (any element's, likewise);</li>
 *   <li>{@code properties}: property filters, all of them.</li>
 * </ul>
 * An action without steps matches every event, as in PostHog's queries. The gateway sends an action to the engine
 * inlined ({@code {id, name, steps}}), so every instance matches the same definition.
 *
 * @param id      the action's id
 * @param name    its name: the label of the series or step
 * @param filter  what it matches, as a property filter (reading the event's name too)
 * @param onlyEvent the one event every step names, if they all name the same one (then only those events are read)
 */
public record Action(long id, String name, PropertyFilter filter, Optional<String> onlyEvent) {
    /** The key of an action entity ({@code {"id": 5, "type": "actions"}}) under which the gateway inlines its definition. */
    public static final String INLINED = "eddy_action";
    private static final String AUTOCAPTURE = "$autocapture";

    /**
     * The action of an entity of type {@code actions}, from its inlined definition.
     *
     * @throws IllegalArgumentException as PostHog's {@code Action ID 5 does not exist!} when it has none
     */
    public static Action ofEntity(final JsonNode entity) {
        final JsonNode definition = entity.get(INLINED);
        if (definition == null || !definition.isObject()) {
            throw new IllegalArgumentException("Action ID " + entity.path("id").asText() + " does not exist!");
        }
        return parse(definition);
    }

    /**
     * @param definition {@code {id, name, steps}} as the gateway inlines it
     * @throws IllegalArgumentException naming what is wrong with it
     */
    public static Action parse(final JsonNode definition) {
        if (!definition.path("id").canConvertToLong()) {
            throw new IllegalArgumentException("an action needs a numeric id");
        }
        final long id = definition.get("id").asLong();
        final JsonNode steps = definition.path("steps");
        if (!steps.isMissingNode() && !steps.isNull() && !steps.isArray()) {
            throw new IllegalArgumentException("the steps of action " + id + " must be a list");
        }
        final List<PropertyFilter> matchers = new ArrayList<>();
        final List<Optional<String>> events = new ArrayList<>();
        for (final JsonNode step : steps) {
            if (!step.isObject()) {
                throw new IllegalArgumentException("every step of action " + id + " must be an object");
            }
            final Optional<String> event = text(step.get("event")).filter(e -> !e.isEmpty());
            events.add(event);
            matchers.add(step(step, event));
        }
        final PropertyFilter filter = matchers.isEmpty() ? PropertyFilter.NONE : PropertyFilter.anyOf(matchers);
        final Optional<String> only = !events.isEmpty() && events.stream().allMatch(e -> e.isPresent() && e.equals(events.get(0)))
                ? events.get(0) : Optional.empty();
        return new Action(id, definition.path("name").asText("Action " + id), filter, only);
    }

    private static PropertyFilter step(final JsonNode step, final Optional<String> event) {
        final List<PropertyFilter> parts = new ArrayList<>();
        event.ifPresent(name -> parts.add(PropertyFilter.of(new EventIs(name))));
        if (event.isPresent() && event.get().equals(AUTOCAPTURE)) {
            text(step.get("selector")).filter(s -> !s.isBlank()).ifPresent(s -> {
                final Selector selector = Selector.parse(s);
                parts.add(PropertyFilter.of(new OnChain("selector", s, selector::matches)));
            });
            text(step.get("tag_name")).ifPresent(tag -> {
                final Optional<Pattern> pattern = BoundedRegex.compile("(^|;)" + tag + "(\\.|$|;|:)");
                parts.add(PropertyFilter.of(new OnChain("tag_name", tag, chain -> pattern.map(p -> p.matcher(chain).find()).orElse(false))));
            });
            text(step.get("href")).ifPresent(href -> {
                final Predicate<String> test = matcher(step.get("href_matching"), "exact", href, true);
                parts.add(PropertyFilter.of(new OnChain("href:" + matching(step.get("href_matching"), "exact"), href,
                        chain -> test.test(ElementsChain.href(chain)))));
            });
            text(step.get("text")).ifPresent(text -> {
                final Predicate<String> test = matcher(step.get("text_matching"), "exact", text, true);
                parts.add(PropertyFilter.of(new OnChain("text:" + matching(step.get("text_matching"), "exact"), text,
                        chain -> ElementsChain.texts(chain).stream().anyMatch(test))));
            });
        }
        text(step.get("url")).filter(u -> !u.isEmpty()).ifPresent(url -> parts.add(PropertyFilter.of(
                new Url(matching(step.get("url_matching"), "contains"), url, matcher(step.get("url_matching"), "contains", url, false)))));
        final JsonNode properties = step.get("properties");
        if (properties != null && !properties.isNull() && !(properties.isArray() && properties.isEmpty())) {
            parts.add(PropertyFilter.parse(properties));
        }
        return PropertyFilter.allOf(parts);
    }

    private static String matching(final JsonNode given, final String fallback) {
        return given == null || given.isNull() ? fallback : given.asText();
    }

    /**
     * How a step's text part compares: {@code regex}, {@code contains} ({@code LIKE '%x%'}; case-insensitive as
     * {@code ILIKE} for the elements' parts), else {@code exact}. An invalid regex matches nothing.
     */
    private static Predicate<String> matcher(final JsonNode matching, final String fallback, final String expected, final boolean ignoreCase) {
        return switch (matching(matching, fallback)) {
            case "regex" -> {
                final Optional<Pattern> pattern = BoundedRegex.compile(expected);
                yield actual -> pattern.map(p -> p.matcher(actual).find()).orElse(false);
            }
            case "contains" -> {
                final Pattern like = like("%" + expected + "%", ignoreCase);
                yield actual -> like.matcher(actual).matches();
            }
            default -> expected::equals;
        };
    }

    /** SQL's {@code LIKE} pattern as an anchored RE2 expression: {@code %} any run, {@code _} one character, {@code \} escapes. */
    static Pattern like(final String pattern, final boolean ignoreCase) {
        final StringBuilder regex = new StringBuilder();
        for (int i = 0; i < pattern.length(); i++) {
            final char c = pattern.charAt(i);
            if (c == '\\' && i + 1 < pattern.length()) {
                regex.append(Selector.escape(String.valueOf(pattern.charAt(++i))));
            } else if (c == '%') {
                regex.append(".*");
            } else if (c == '_') {
                regex.append('.');
            } else {
                regex.append(Selector.escape(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString(), Pattern.DOTALL | (ignoreCase ? Pattern.CASE_INSENSITIVE : 0));
    }

    private static Optional<String> text(final JsonNode node) {
        return node == null || node.isNull() || node.isContainerNode() ? Optional.empty() : Optional.of(node.asText());
    }

    /** The event's name is {@code name}. */
    private record EventIs(String name) implements PropertyFilter.Condition {
        @Override
        public boolean test(final PropertyFilter.Source source) {
            return name.equals(source.eventName());
        }

        @Override
        public Set<String> eventKeys() {
            return Set.of();
        }

        @Override
        public boolean readsEventName() {
            return true;
        }

        @Override
        public String describe() {
            return "event=" + com.fasterxml.jackson.databind.node.TextNode.valueOf(name);
        }
    }

    /** The event's {@code $current_url} compares with {@code url}; an event without one does not match. */
    private record Url(String matching, String url, Predicate<String> test) implements PropertyFilter.Condition {
        @Override
        public boolean test(final PropertyFilter.Source source) {
            final JsonNode actual = source.event("$current_url");
            return actual != null && !actual.isNull() && test.test(actual.isValueNode() ? actual.asText() : actual.toString());
        }

        @Override
        public Set<String> eventKeys() {
            return Set.of("$current_url");
        }

        @Override
        public boolean readsEventName() {
            return false;
        }

        @Override
        public String describe() {
            return "url:" + matching + "=" + com.fasterxml.jackson.databind.node.TextNode.valueOf(url);
        }
    }

    /** A part read from the event's elements chain (an event without elements has the empty chain). */
    private record OnChain(String kind, String value, Predicate<String> test) implements PropertyFilter.Condition {
        @Override
        public boolean test(final PropertyFilter.Source source) {
            return test.test(ElementsChain.of(source).orElse(""));
        }

        @Override
        public Set<String> eventKeys() {
            return ElementsChain.PROPERTIES;
        }

        @Override
        public boolean readsEventName() {
            return false;
        }

        @Override
        public String describe() {
            return "elements:" + kind + "=" + com.fasterxml.jackson.databind.node.TextNode.valueOf(value);
        }
    }
}
