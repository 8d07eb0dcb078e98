package dev.eddy.trends;

import static dev.eddy.trends.TrendTesting.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Actions matching events as PostHog's {@code action_to_expr} does, with the events and steps of PostHog's own tests
 * ({@code test_event_model.py}'s {@code filter_by_actions_factory}, {@code test_action.py}, {@code test_property.py}).
 */
class ActionTest {
    private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");

    /** An event: its name, then its properties as JSON. */
    private record Event(String name, String properties) implements PropertyFilter.Source {
        @Override
        public JsonNode event(final String key) {
            return read(properties).get(key);
        }

        @Override
        public JsonNode person(final String key) {
            return null;
        }

        @Override
        public JsonNode group(final int typeIndex, final String key) {
            return null;
        }

        @Override
        public String eventName() {
            return name;
        }
    }

    /** An autocapture event with posthog-js's {@code $elements} (innermost first). */
    private static Event click(final String elements) {
        return new Event("$autocapture", "{\"$elements\":" + elements + "}");
    }

    // PostHog's three elements of its selector tests.
    private static final Event E1 = click("[{\"tag_name\":\"a\",\"attr__href\":\"/a-url\",\"nth_child\":1,\"attr__class\":\"one-class\"},"
            + "{\"tag_name\":\"button\",\"nth_child\":0},{\"tag_name\":\"div\",\"nth_child\":0},{\"tag_name\":\"section\",\"attr__id\":\"nested\"}]");
    private static final Event E2 = click("[{\"tag_name\":\"a\",\"attr__id\":\"someId\",\"nth_child\":2},{\"tag_name\":\"div\"},{\"tag_name\":\"div\"},"
            + "{\"tag_name\":\"div\"},{\"tag_name\":\"div\"},{\"tag_name\":\"div\"},{\"tag_name\":\"div\"},{\"attr__href\":\"/a-url-2\"}]");
    private static final Event E3 = click("[{\"tag_name\":\"a\",\"nth_child\":3},{\"tag_name\":\"div\"}]");

    private static Action action(final String steps) {
        return Action.parse(read("{\"id\":7,\"name\":\"signed up\",\"steps\":" + steps + "}"));
    }

    private static List<Boolean> matches(final Action action, final Event... events) {
        return java.util.Arrays.stream(events).map(e -> action.filter().test(e, NOW)).toList();
    }

    @Test
    void selectorsMatchTheElementsChainAsPostHogsDo() {
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"div > div > a\"},{\"event\":\"$autocapture\","
                + "\"selector\":\"div > a.somethingthatdoesntexist\"}]"), E1, E2, E3)).containsExactly(false, true, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"div > a:nth-child(2)\"}]"), E1, E2, E3))
                .containsExactly(false, true, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"[id='someId']\"}]"), E1, E2, E3)).containsExactly(false, true, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"[id='nested'] a\"}]"), E1, E2, E3)).containsExactly(true, false, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"div *\"}]"), E1, E2, E3)).containsExactly(true, true, true);
    }

    @Test
    void classesTagsAndAttributes() {
        final Event active = click("[{\"tag_name\":\"span\"},{\"tag_name\":\"a\",\"attr__class\":[\"active\",\"crazy-class\",\"nav-link\"]}]");
        final Event plain = click("[{\"tag_name\":\"span\"},{\"tag_name\":\"a\"}]");
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"a.nav-link.active\",\"tag_name\":\"a\"}]"), active, plain))
                .containsExactly(true, false);
        final Event input = click("[{\"tag_name\":\"span\"},{\"tag_name\":\"input\",\"attr__class\":\"button\"}]");
        final Event button = click("[{\"tag_name\":\"span\"},{\"tag_name\":\"button\",\"attr__class\":\"input\"}]");
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"input\"}]"), input, button)).containsExactly(true, false);
        final Event data = click("[{\"tag_name\":\"button\",\"attr__data-id\":\"123\"}]");
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"[data-id=\\\"123\\\"]\"}]"), data, plain)).containsExactly(true, false);
    }

    @Test
    void hrefAndTextOfTheElements() {
        final Event a = click("[{\"tag_name\":\"a\",\"attr__href\":\"/a-url\"}]");
        final Event google = click("[{\"tag_name\":\"a\",\"attr__href\":\"https://google.com/a-url\"}]");
        final Event a2 = click("[{\"tag_name\":\"a\",\"attr__href\":\"/a-url-2\"},{\"tag_name\":\"div\"}]");
        final Event b = click("[{\"tag_name\":\"a\",\"attr__href\":\"/b-url\"}]");
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"href\":\"/a-url\",\"selector\":\"a\"},{\"event\":\"$autocapture\",\"href\":\"/a-url-2\"}]"),
                a, google, a2, b)).containsExactly(true, false, true, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"href\":\"/A-URL\",\"href_matching\":\"contains\",\"selector\":\"a\"}]"),
                a, google, a2, b)).as("contains is case-insensitive for hrefs").containsExactly(true, true, true, false);
        final Event signUp = click("[{\"tag_name\":\"span\",\"$el_text\":\"Sign up now\"},{\"tag_name\":\"button\",\"$el_text\":\"x\"}]");
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"text\":\"sign UP\",\"text_matching\":\"contains\"}]"), signUp, a)).containsExactly(true, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"text\":\"x\"}]"), signUp, a)).as("any element's text").containsExactly(true, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"text\":\"^Sign\",\"text_matching\":\"regex\"}]"), signUp)).containsExactly(true);
        // Element parts count only on $autocapture: on a pageview they are not asked.
        assertThat(matches(action("[{\"event\":\"$pageview\",\"text\":\"nothing like it\"}]"), new Event("$pageview", "{}"))).containsExactly(true);
        // The chain posthog-js sends as text is read as it is.
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"selector\":\"a.btn\",\"href\":\"/x\"}]"),
                new Event("$autocapture", "{\"$elements_chain\":\"a.btn:attr__href=\\\"/x\\\"href=\\\"/x\\\"nth-child=\\\"1\\\"nth-of-type=\\\"1\\\"\"}")))
                .containsExactly(true);
    }

    @Test
    void urlsMatchExactlyByRegexOrAsSqlLike() {
        final Event feedback = new Event("$autocapture", "{\"$current_url\":\"https://posthog.com/feedback/123\"}");
        final Event noUrl = new Event("$autocapture", "{}");
        final Event longer = new Event("$autocapture", "{\"$current_url\":\"https://posthog.com/feedback/1234\"}");
        final Event pageview = new Event("$pageview", "{\"$current_url\":\"https://posthog.com/feedback/123\"}");
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"url\":\"https://posthog.com/feedback/123\",\"url_matching\":\"exact\"}]"),
                feedback, noUrl, longer, pageview)).containsExactly(true, false, false, false);
        assertThat(matches(action("[{\"event\":\"$autocapture\",\"url\":\"/123\"}]"), feedback, noUrl, longer, pageview))
                .as("contains by default").containsExactly(true, false, true, false);
        assertThat(matches(action("[{\"url\":\"https://posthog.com/%/123\",\"url_matching\":\"contains\"}]"), feedback, longer, pageview, noUrl))
                .as("% is a wildcard").containsExactly(true, true, true, false);
        assertThat(matches(action("[{\"url\":\"feedback_23\"}]"), feedback, new Event("x", "{\"$current_url\":\"/feedbackX23\"}")))
                .as("_ is any one character").containsExactly(false, true);
        assertThat(matches(action("[{\"url\":\"/123$\",\"url_matching\":\"regex\"}]"), feedback, longer)).containsExactly(true, false);
        assertThat(matches(action("[{\"url\":\"POSTHOG.com\"}]"), feedback)).as("LIKE is case-sensitive").containsExactly(false);
        assertThat(matches(action("[{\"url\":\"(unclosed\",\"url_matching\":\"regex\"}]"), feedback)).as("an invalid regex matches nothing")
                .containsExactly(false);
    }

    @Test
    void stepsAreAlternativesAndPropertiesAllOfEachStep() {
        final Event viewed = new Event("insight viewed", "{\"filters_count\":2}");
        final Action either = action("[{\"event\":\"insight viewed\",\"properties\":[{\"key\":\"insight\",\"value\":[\"RETENTION\"],\"type\":\"event\"}]},"
                + "{\"event\":\"insight viewed\",\"properties\":[{\"key\":\"filters_count\",\"value\":\"1\",\"operator\":\"gt\"}]}]");
        assertThat(matches(either, viewed, new Event("insight viewed", "{\"filters_count\":1}"))).containsExactly(true, false);
        assertThat(either.onlyEvent()).contains("insight viewed");
        final Action any = action("[{\"event\":\"$pageview\"},{\"event\":null}]");
        assertThat(matches(any, new Event("anything", "{}"))).containsExactly(true);
        assertThat(any.onlyEvent()).isEmpty();
        assertThat(matches(action("[]"), new Event("anything", "{}"))).as("an action without steps is every event").containsExactly(true);
        assertThat(action("[]").name()).isEqualTo("signed up");
    }

    @Test
    void theChainOfElementsIsPostHogs() {
        assertThat(ElementsChain.fromElements(read("[{\"tag_name\":\"a\",\"$el_text\":\"some_text\",\"attr__href\":\"/a-url\",\"nth_child\":0,"
                + "\"nth_of_type\":0},{\"tag_name\":\"div\",\"attr__class\":\"b a\"}]")))
                .isEqualTo("a:attr__href=\"/a-url\"href=\"/a-url\"nth-child=\"0\"nth-of-type=\"0\"text=\"some_text\";"
                        + "div.a.b:attr__class=\"b a\"nth-child=\"0\"nth-of-type=\"0\"");
        final String chain = "a:href=\"/first\"text=\"One\";div:text=\"Two\";section:attr_id=\"s\"href=\"/second\"text=\"One\"";
        assertThat(ElementsChain.href(chain)).isEqualTo("/first");
        assertThat(ElementsChain.texts(chain)).containsExactly("One", "Two");
        assertThat(ElementsChain.ids(chain)).containsExactly("s");
        assertThat(ElementsChain.usefulElements(chain)).containsExactly("a");
        assertThat(Map.of("regex", Selector.parse("div > span:nth-child(3)").regex())).containsValue(
                "(^|;)span.*?nth\\-child=\"3\".*?[^;]*?($|;|:([^;^\\s]*(;|$|\\s)))div[^;]*?($|;|:([^;^\\s]*(;|$|\\s))).*");
        assertThatThrownBy(() -> Selector.parse("a".repeat(1001))).hasMessageContaining("at most 1000");
        assertThatThrownBy(() -> Action.ofEntity(read("{\"id\":9,\"type\":\"actions\"}"))).hasMessage("Action ID 9 does not exist!");
    }
}
