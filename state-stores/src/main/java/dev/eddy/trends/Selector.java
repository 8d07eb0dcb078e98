package dev.eddy.trends;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;

/**
 * A CSS selector of an action step, matched against an elements chain as PostHog matches it: the selector is split
 * into parts (the clicked element first, then its ancestors), each part's tag, classes, id, {@code nth-child} and
 * attributes become a regular expression over the chain ({@link #regex}), and an id or a tag among {@code a},
 * {@code button}, {@code input}, {@code select}, {@code textarea}, {@code label} must also be in the chain. As in
 * PostHog, a descendant combinator between plain tags means the direct parent. The expression runs on RE2, in time
 * linear in the chain.
 */
public final class Selector {
    /** The most characters a step's selector may have. */
    public static final int MAX_LENGTH = 1000;
    private static final java.util.regex.Pattern ATTRIBUTE = java.util.regex.Pattern.compile("([a-zA-Z]*)\\[(.*)=['|\"](.*)['|\"]]");
    private static final java.util.regex.Pattern ATTRIBUTE_PAIR =
            java.util.regex.Pattern.compile("\\[\\s*([^\\]\\s=\"']+)\\s*=\\s*(['\"])((?:\\\\.|(?!\\\\|\\2).)*)\\2\\s*]");
    /** Dots that separate classes: not those inside {@code [...]}. */
    private static final java.util.regex.Pattern CLASS_DOT = java.util.regex.Pattern.compile("\\.(?![^\\[]*])");
    private static final Set<String> USEFUL = Set.of("a", "button", "input", "select", "textarea", "label");
    private static final Set<String> UNPREFIXED = Set.of("attr_id", "href", "text", "nth-child", "nth-of-type");
    private static final String WITHIN_ELEMENT = "(?:[^;\"]|\"(?:\\\\\\\\.|[^\"\\\\\\\\])*\")*?";
    private static final String TAIL = "[^;]*?($|;|:([^;^\\s]*(;|$|\\s)))";

    /** One element of the selector, innermost first. */
    private static final class Part {
        String tag;
        boolean directDescendant;
        boolean confined;
        String id;
        final List<String> classes = new ArrayList<>();
        /** Attributes as the chain names them (its keys without {@code attr__}), in the order they were given. */
        final Map<String, String> attributes = new LinkedHashMap<>();
    }

    private final String text;
    private final List<Part> parts;
    private final Pattern pattern;

    private Selector(final String text, final List<Part> parts, final Pattern pattern) {
        this.text = text;
        this.parts = parts;
        this.pattern = pattern;
    }

    /**
     * @throws IllegalArgumentException when the selector is too long or makes no valid expression
     */
    public static Selector parse(final String selector) {
        if (selector.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("a selector has at most " + MAX_LENGTH + " characters");
        }
        final String cleaned = selector.replace("> * > ", "").replace("> *", "").replace("\\:", ":").strip();
        final List<String> tags = split(cleaned);
        Collections.reverse(tags);
        final List<Part> parts = new ArrayList<>();
        for (int i = 0; i < tags.size(); i++) {
            final String tag = tags.get(i);
            if (tag.equals(">") || tag.isEmpty()) {
                continue;
            }
            parts.add(part(tag, i > 0 && tags.get(i - 1).equals(">")));
        }
        final String regex = regex(parts);
        try {
            return new Selector(selector, parts, regex.isEmpty() ? null : Pattern.compile(regex));
        } catch (final PatternSyntaxException e) {
            throw new IllegalArgumentException("the selector '" + selector + "' cannot be matched: " + e.getMessage(), e);
        }
    }

    /** The expression over the chain (empty for a selector without parts), as the API's {@code selector_regex} shows it. */
    public String regex() {
        return pattern == null ? "" : pattern.pattern();
    }

    public boolean matches(final String chain) {
        if (parts.isEmpty()) {
            return true;
        }
        if (parts.stream().anyMatch(p -> p.id != null)) {
            final List<String> ids = ElementsChain.ids(chain);
            for (final Part part : parts) {
                if (part.id != null && !ids.contains(part.id)) {
                    return false;
                }
            }
        }
        // "#id" alone is the id's check only.
        final Part only = parts.get(0);
        if (parts.size() == 1 && only.id != null && only.tag == null && only.classes.isEmpty()
                && only.attributes.keySet().equals(Set.of("attr_id"))) {
            return true;
        }
        final List<String> useful = parts.stream().map(p -> p.tag).filter(t -> t != null && USEFUL.contains(t)).toList();
        if (!useful.isEmpty() && ElementsChain.usefulElements(chain).stream().noneMatch(useful::contains)) {
            return false;
        }
        return pattern.matcher(chain).find();
    }

    @Override
    public String toString() {
        return text;
    }

    /** The selector split at spaces outside quotes and brackets. */
    private static List<String> split(final String selector) {
        final List<String> tags = new ArrayList<>();
        final StringBuilder current = new StringBuilder();
        int brackets = 0;
        char quote = 0;
        for (int i = 0; i < selector.length(); i++) {
            final char c = selector.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else if (c == '\\' && i + 1 < selector.length()) {
                    current.append(c);
                    current.append(selector.charAt(++i));
                    continue;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '[') {
                brackets++;
            } else if (c == ']') {
                brackets = Math.max(0, brackets - 1);
            } else if (Character.isWhitespace(c) && brackets == 0) {
                tags.add(current.toString());
                current.setLength(0);
                continue;
            }
            current.append(c);
        }
        tags.add(current.toString());
        return tags;
    }

    private static Part part(final String given, final boolean directDescendant) {
        final Part part = new Part();
        part.directDescendant = directDescendant;
        String tag = given;
        final Matcher attribute = ATTRIBUTE.matcher(tag);
        if (attribute.find()) {
            final Matcher pairs = ATTRIBUTE_PAIR.matcher(tag);
            boolean any = false;
            while (pairs.find()) {
                final String key = pairs.group(1);
                final String value = pairs.group(3);
                if (key.equals("id")) {
                    part.id = value;
                    part.attributes.put("attr_id", value);
                } else {
                    part.attributes.put(key, value);
                    any = true;
                }
            }
            if (part.attributes.isEmpty()) {
                // A form the pair expression does not take ([a=b'c'] and such): the first attribute as PostHog reads it.
                final String key = attribute.group(2).equals("id") ? "attr_id" : attribute.group(2);
                part.attributes.put(key, attribute.group(3));
                if (key.equals("attr_id")) {
                    part.id = attribute.group(3);
                }
            }
            part.confined = any;
            tag = attribute.group(1);
        }
        if (tag.contains(":nth-child(")) {
            final String[] split = tag.split(":nth-child\\(", 2);
            part.attributes.put("nth-child", split[1].replace(")", ""));
            tag = split[0];
        }
        if (tag.contains(".")) {
            final String[] split = CLASS_DOT.split(tag, -1);
            for (int i = 1; i < split.length; i++) {
                part.classes.add(split[i]);
            }
            tag = split[0];
        }
        if (tag.contains("#")) {
            final String[] split = tag.split("#", -1);
            if (split.length > 1) {
                part.id = split[1];
                part.attributes.put("attr_id", split[1]);
            }
            tag = split[0];
        }
        part.tag = tag.isEmpty() ? null : tag;
        return part;
    }

    private static String regex(final List<Part> parts) {
        final StringBuilder regex = new StringBuilder();
        for (final Part part : parts) {
            if (part.tag != null && !part.tag.equals("*")) {
                regex.append(escape(part.tag));
            }
            if (!part.classes.isEmpty()) {
                final List<String> sorted = new ArrayList<>(part.classes);
                sorted.sort(null);
                regex.append(".*?\\.").append(String.join("\\..*?", sorted.stream().map(Selector::escape).toList()));
            }
            if (!part.attributes.isEmpty()) {
                final String separator = part.confined ? WITHIN_ELEMENT : ".*?";
                regex.append(separator);
                final Map<String, String> ordered = new TreeMap<>();
                part.attributes.forEach((key, value) -> ordered.put((UNPREFIXED.contains(key) ? key : "attr__" + key) + "\u0000" + key, value));
                ordered.forEach((sortKey, value) -> {
                    final String key = sortKey.substring(sortKey.indexOf('\u0000') + 1);
                    regex.append(escape(key)).append("=\"").append(escape(value.replace("\\\"", "\"").replace("\"", "\\\""))).append('"')
                            .append(separator);
                });
            }
            regex.append(TAIL);
            if (part.directDescendant) {
                regex.append(".*");
            }
        }
        return regex.isEmpty() ? "" : "(^|;)" + regex;
    }

    /** A literal in an RE2 expression: every character that means something there escaped. */
    static String escape(final String literal) {
        final StringBuilder escaped = new StringBuilder(literal.length() + 8);
        for (int i = 0; i < literal.length(); i++) {
            final char c = literal.charAt(i);
            if ("\\.+*?()|[]{}^$-&~#".indexOf(c) >= 0) {
                escaped.append('\\');
            }
            escaped.append(c);
        }
        return escaped.toString();
    }
}
