package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An autocapture event's elements as PostHog's elements chain: the clicked element first, then its ancestors, joined
 * by {@code ;}, each {@code tag.class1.class2:} followed by its attributes {@code key="value"} sorted by key
 * ({@code a.btn:attr__href="/x"href="/x"nth-child="1"nth-of-type="1"text="Buy"}). posthog-js sends it as
 * {@code $elements_chain}, and (unless told otherwise) the elements as {@code $elements} too, from which the chain is
 * built as PostHog's ingestion builds it. The parts actions match are read from the chain with the expressions of
 * PostHog's materialized columns: the first {@code href}, every {@code text}, every {@code attr_id}, and which of the
 * elements actions look for are present.
 */
public final class ElementsChain {
    /** The event properties a chain is read from. */
    public static final Set<String> PROPERTIES = Set.of("$elements_chain", "$elements");
    private static final Pattern HREF = Pattern.compile("(?::|\")href=\"(.*?)\"");
    private static final Pattern TEXT = Pattern.compile("(?::|\")text=\"(.*?)\"");
    private static final Pattern ID = Pattern.compile("(?::|\")attr_id=\"(.*?)\"");
    private static final Pattern USEFUL = Pattern.compile("(?:^|;)(a|button|form|input|select|textarea|label)(?:\\.|$|:)");
    private static final int MAX_TEXT = 400;
    private static final int MAX_HREF = 2048;

    private ElementsChain() {
    }

    /** The event's chain: {@code $elements_chain}, or built from {@code $elements}; empty when it has neither. */
    public static Optional<String> of(final PropertyFilter.Source event) {
        final JsonNode chain = event.event("$elements_chain");
        if (chain != null && chain.isTextual() && !chain.asText().isEmpty()) {
            return Optional.of(chain.asText());
        }
        final JsonNode elements = event.event("$elements");
        if (elements != null && elements.isArray() && !elements.isEmpty()) {
            return Optional.of(fromElements(elements));
        }
        return Optional.empty();
    }

    /** The chain of posthog-js's {@code $elements}, as PostHog's ingestion writes it. */
    public static String fromElements(final JsonNode elements) {
        final List<String> parts = new ArrayList<>();
        for (final JsonNode element : elements) {
            if (!element.isObject()) {
                continue;
            }
            final StringBuilder part = new StringBuilder();
            final JsonNode tag = element.get("tag_name");
            if (tag != null && tag.isTextual()) {
                part.append(tag.asText());
            }
            for (final String cls : classes(element.get("attr__class"))) {
                part.append('.').append(cls.replace("\"", ""));
            }
            final Map<String, String> attributes = new TreeMap<>();
            text(element.get("$el_text")).filter(t -> !t.isEmpty()).ifPresent(t -> attributes.put("text", cut(t, MAX_TEXT)));
            attributes.put("nth-child", text(element.get("nth_child")).filter(t -> !t.isEmpty()).orElse("0"));
            attributes.put("nth-of-type", text(element.get("nth_of_type")).filter(t -> !t.isEmpty()).orElse("0"));
            text(element.get("attr__href")).filter(h -> !h.isEmpty()).ifPresent(h -> attributes.put("href", cut(h, MAX_HREF)));
            text(element.get("attr__id")).filter(i -> !i.isEmpty()).ifPresent(i -> attributes.put("attr_id", i));
            element.fields().forEachRemaining(field -> {
                if (field.getKey().startsWith("attr__")) {
                    text(field.getValue()).ifPresent(v -> attributes.put(field.getKey(), v));
                }
            });
            part.append(':');
            attributes.forEach((key, value) -> part.append(escape(key)).append("=\"").append(escape(value)).append('"'));
            parts.add(part.toString());
        }
        return String.join(";", parts);
    }

    /** The first element's {@code href} with one ({@code ""} when none has). */
    public static String href(final String chain) {
        final Matcher m = HREF.matcher(chain);
        return m.find() ? m.group(1) : "";
    }

    /** Every element's {@code text}, each once. */
    public static List<String> texts(final String chain) {
        return all(TEXT, chain);
    }

    /** Every element's id, each once. */
    public static List<String> ids(final String chain) {
        return all(ID, chain);
    }

    /** Which of {@code a}, {@code button}, {@code form}, {@code input}, {@code select}, {@code textarea}, {@code label} the chain has. */
    public static Set<String> usefulElements(final String chain) {
        final Set<String> found = new LinkedHashSet<>();
        final Matcher m = USEFUL.matcher(chain);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    private static List<String> all(final Pattern pattern, final String chain) {
        final Set<String> found = new LinkedHashSet<>();
        final Matcher m = pattern.matcher(chain);
        while (m.find()) {
            found.add(m.group(1));
        }
        return List.copyOf(found);
    }

    private static List<String> classes(final JsonNode value) {
        final List<String> classes = new ArrayList<>();
        if (value != null && value.isArray()) {
            value.forEach(c -> text(c).filter(t -> !t.isEmpty()).ifPresent(classes::add));
        } else {
            text(value).ifPresent(t -> {
                for (final String c : t.split(" ")) {
                    if (!c.isEmpty()) {
                        classes.add(c);
                    }
                }
            });
        }
        classes.sort(null);
        return classes;
    }

    private static Optional<String> text(final JsonNode value) {
        if (value == null || value.isNull() || value.isContainerNode()) {
            return Optional.empty();
        }
        return Optional.of(value.asText());
    }

    private static String cut(final String text, final int max) {
        return text.length() <= max ? text : text.substring(0, max);
    }

    private static String escape(final String text) {
        return text.replace("\"", "\\\"");
    }
}
