package dev.eddy.funnels;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An elements chain ({@code $elements_chain}, as PostHog's ingestion writes it) read back into PostHog's serialized
 * elements ({@code chain_to_elements} then {@code ElementSerializer}): {@code {event, text, tag_name, attr_class,
 * href, attr_id, nth_child, nth_of_type, attributes, order}}, the first element first. A funnel correlation shows an
 * autocapture candidate's elements so.
 */
final class ChainElements {
    /** The elements, split at {@code ;} outside quotes. */
    private static final Pattern ELEMENT = Pattern.compile("(?:[^\\s;\"]|\"(?:\\\\.|[^\"])*\")+");
    /** An element's tag and classes, then its attributes (a class may hold {@code :} too). */
    private static final Pattern TAG_AND_ATTRIBUTES = Pattern.compile("(.*?)($|:([a-zA-Z\\-_0-9]*=.*))");
    private static final Pattern ATTRIBUTE = Pattern.compile("(?<key>.*?)=\"(?<value>.*?[^\\\\])\"", Pattern.MULTILINE);

    private ChainElements() {
    }

    static List<ObjectNode> of(final String chain) {
        final List<ObjectNode> elements = new ArrayList<>();
        final Matcher each = ELEMENT.matcher(chain);
        while (each.find()) {
            final ObjectNode element = JsonNodeFactory.instance.objectNode();
            element.putNull("event");
            element.putNull("text");
            element.putNull("tag_name");
            element.putNull("attr_class");
            element.putNull("href");
            element.putNull("attr_id");
            element.putNull("nth_child");
            element.putNull("nth_of_type");
            final ObjectNode attributes = element.putObject("attributes");
            element.put("order", elements.size());
            final Matcher split = TAG_AND_ATTRIBUTES.matcher(each.group());
            if (split.find()) {
                final String tag = split.group(1);
                if (!tag.isEmpty()) {
                    final String[] tagAndClass = tag.split("\\.", 2);
                    element.put("tag_name", tagAndClass[0]);
                    if (tagAndClass.length > 1) {
                        final var classes = element.putArray("attr_class");
                        for (final String c : tagAndClass[1].split("\\.")) {
                            if (!c.isEmpty()) {
                                classes.add(c);
                            }
                        }
                    }
                }
                final Matcher attribute = ATTRIBUTE.matcher(split.group(3) == null ? "" : split.group(3));
                while (attribute.find()) {
                    final String key = attribute.group("key");
                    final String value = attribute.group("value");
                    switch (key) {
                        case "href" -> element.put("href", value);
                        case "nth-child" -> element.put("nth_child", number(value));
                        case "nth-of-type" -> element.put("nth_of_type", number(value));
                        case "text" -> element.put("text", value);
                        case "attr_id" -> element.put("attr_id", value);
                        default -> {
                            if (!key.isEmpty()) {
                                attributes.put(key, value);
                            }
                        }
                    }
                }
            }
            elements.add(element);
        }
        return elements;
    }

    private static int number(final String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (final NumberFormatException e) {
            return 0;
        }
    }
}
