package dev.eddy.columns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.trends.BlockFilter;
import dev.eddy.trends.BlockRows;
import dev.eddy.trends.PropertyFilter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class EventBlockTest {
    private static final PropertyFilter.Source NO_PERSON = PropertyFilter.Source.ofEvent(Json.mapper().createObjectNode());

    @Test
    void rowsComeBackAsTheyWereAddedThroughAnEncoding() throws Exception {
        final List<EventBlock.Row> rows = List.of(
                row(1_700_000_000_000_000L, "p1", "u1", "$pageview", "{\"$browser\":\"Chrome\",\"n\":1,\"ok\":true}"),
                row(1_699_999_999_000_000L, "p2", "u2", "$pageview", "{\"$browser\":\"Safari\",\"n\":1.5,\"nested\":{\"a\":[1,2]}}"),
                row(1_700_000_003_000_000L, "p1", "u1", "signed up", "{\"$browser\":\"Chrome\",\"gone\":null,\"ü\":\"漢字\"}"),
                row(1_700_000_003_000_000L, "p3", "u3", "$pageview", "{}"));
        final EventBlock.Builder builder = new EventBlock.Builder();
        rows.forEach(builder::add);
        final EventBlock block = EventBlock.decode(builder.build().encode());

        assertThat(block.rows()).isEqualTo(4);
        for (int r = 0; r < rows.size(); r++) {
            assertThat(block.row(r)).as("row %d", r).isEqualTo(rows.get(r));
        }
        // Dictionaries: each distinct value once, code 0 of a property column for "absent".
        assertThat(block.events().size()).isEqualTo(2);
        assertThat(block.persons().size()).isEqualTo(3);
        final EventBlock.Column browser = block.property("$browser");
        assertThat(browser.size()).isEqualTo(3);
        assertThat(browser.entry(0)).isNull();
        assertThat(browser.value(3)).isNull();
        assertThat(browser.code(0)).isEqualTo(browser.code(2)).isEqualTo(browser.codeOf("Chrome"));
        assertThat(block.property("never seen").value(1)).isNull();
        assertThat(block.property("n").value(1).isDouble()).as("numbers keep their type").isTrue();
        assertThat(block.property("ok").value(0).isBoolean()).isTrue();
        assertThat(block.propertyKeys()).containsExactly("$browser", "n", "ok", "nested", "gone", "ü");
    }

    @Test
    void aBlockStoredSectionBySectionReadsOnlyTheSectionsAskedFor() {
        final EventBlock.Builder builder = new EventBlock.Builder();
        builder.add(row(1_700_000_000_000_000L, "p1", "u1", "$pageview", "{\"$browser\":\"Chrome\",\"n\":1}"));
        builder.add(row(1_700_000_001_000_000L, "p2", "u2", "signup", "{\"plan\":\"pro\"}"));
        final EventBlock built = builder.build();
        final EventBlock.Stored stored = built.encodeSections();
        assertThat(stored.sections()).containsOnlyKeys("span", "time", "uuid", "person", "distinct_id", "event", "p:$browser", "p:n", "p:plan");
        final List<String> read = new java.util.ArrayList<>();
        final EventBlock block = EventBlock.ofSections(stored.header(), name -> {
            read.add(name);
            return stored.sections().get(name);
        });
        assertThat(block.rows()).isEqualTo(2);
        assertThat(block.property("plan").value(1).asText()).isEqualTo("pro");
        assertThat(block.events().value(0).asText()).isEqualTo("$pageview");
        assertThat(block.property("plan").value(0)).isNull();
        assertThat(read).containsExactly("p:plan", "event");
        assertThat(block.row(1)).isEqualTo(built.row(1));
        assertThat(block.encode()).as("the same encoding, section by section or whole").isEqualTo(built.encode());
        assertThat(EventBlock.decode(built.encode()).encodeSections().header()).isEqualTo(stored.header());

        // Keys no row has share one column: a block kept decoded does not grow with every property name asked of it.
        block.property("never");
        final long weight = block.memoryBytes();
        final int sectionsRead = read.size();
        for (int i = 0; i < 100; i++) {
            assertThat(block.property("missing-" + i).value(1)).isNull();
        }
        assertThat(block.memoryBytes()).isEqualTo(weight);
        assertThat(read).as("no section is read for them").hasSize(sectionsRead);

        final EventBlock removed = EventBlock.ofSections(stored.header(), name -> null);
        assertThatThrownBy(() -> removed.events()).isInstanceOf(EventBlock.Gone.class);
        final EventBlock wrong = EventBlock.ofSections(stored.header(), name -> new byte[1]);
        assertThatThrownBy(() -> wrong.timeMicros(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not");
        assertThatThrownBy(() -> EventBlock.ofSections(built.encode(), name -> null)).as("a whole block is not a table of sections")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void largeDictionariesWidenTheirCodes() {
        final EventBlock.Builder builder = new EventBlock.Builder();
        for (int i = 0; i < 70_000; i++) {
            builder.add(row(1_700_000_000_000_000L + i, "p" + (i % 300), "u" + i, "e", "{\"url\":\"/page/" + i + "\"}"));
        }
        final EventBlock block = EventBlock.decode(builder.build().encode());
        assertThat(block.property("url").size()).isEqualTo(70_001);
        assertThat(block.property("url").value(69_999).asText()).isEqualTo("/page/69999");
        assertThat(block.distinctIds().value(65_537).asText()).isEqualTo("u65537");
        assertThat(block.persons().size()).isEqualTo(300);
    }

    @Test
    void personsAreKeptAsUuidHalvesAndTheirTextsMadeOnlyWhenAsked() {
        final EventBlock.Builder builder = new EventBlock.Builder();
        for (int i = 0; i < 1_000; i++) {
            builder.add(row(1_700_000_000_000_000L + i, "p" + i % 400, "u" + i, "e", "{}"));
        }
        final EventBlock block = EventBlock.decode(builder.build().encode());
        final long encoded = block.memoryBytes();
        final EventBlock.Persons persons = block.persons();
        final long withPersons = block.memoryBytes();
        assertThat(persons.size()).isEqualTo(400);
        assertThat(withPersons - encoded).as("16 bytes a person, 2 a row's code, and the object")
                .isEqualTo(400 * 16 + 1_000 * 2 + 48);
        final UUID p7 = UUID.nameUUIDFromBytes("p7".getBytes());
        final int code = persons.code(407);
        assertThat(persons.uuid(code)).isEqualTo(p7).isEqualTo(block.person(code));
        assertThat(persons.high(code)).isEqualTo(p7.getMostSignificantBits());
        assertThat(persons.low(code)).isEqualTo(p7.getLeastSignificantBits());
        assertThat(block.memoryBytes()).as("no text made for uuids asked as such").isEqualTo(withPersons);
        assertThat(persons.textAt(7)).isEqualTo(p7.toString()).isSameAs(persons.text(code));
        assertThat(block.memoryBytes()).as("the texts' array and one text weigh in").isEqualTo(withPersons + 400 * 8 + 80);
        assertThat(block.row(407).person()).isEqualTo(p7);
    }

    @Test
    void aColumnIsReadWithoutReadingTheOthers() {
        final EventBlock.Builder builder = new EventBlock.Builder();
        builder.add(row(1L, "p", "u", "e", "{\"a\":\"x\",\"b\":\"y\"}"));
        builder.add(row(2L, "p", "u", "e", "{\"a\":\"z\",\"b\":\"y\"}"));
        final byte[] bytes = builder.build().encode();
        // The last byte is a code of the last section, column b's: point it past b's dictionary.
        bytes[bytes.length - 1] = (byte) 0xff;
        final EventBlock block = EventBlock.decode(bytes);
        assertThat(block.property("a").value(1).asText()).isEqualTo("z");
        assertThat(block.events().value(0).asText()).isEqualTo("e");
        assertThatThrownBy(() -> block.property("b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("outside its dictionary");
    }

    @Test
    void anEmptyBlockEncodesAndDecodes() {
        final EventBlock block = EventBlock.decode(new EventBlock.Builder().build().encode());
        assertThat(block.rows()).isZero();
        assertThat(block.property("x").size()).isEqualTo(1);
    }

    @Test
    void bytesThatAreNotABlockAreRefused() {
        final EventBlock.Builder builder = new EventBlock.Builder();
        builder.add(row(1L, "p", "u", "e", "{\"k\":\"v\"}"));
        final byte[] bytes = builder.build().encode();
        assertThatThrownBy(() -> EventBlock.decode(Arrays.copyOf(bytes, bytes.length - 1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EventBlock.decode(Arrays.copyOf(bytes, bytes.length + 1))).isInstanceOf(IllegalArgumentException.class);
        final byte[] otherVersion = bytes.clone();
        otherVersion[0] = 9;
        assertThatThrownBy(() -> EventBlock.decode(otherVersion)).isInstanceOf(IllegalArgumentException.class);
        final byte[] huge = {1, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f};
        assertThatThrownBy(() -> EventBlock.decode(huge)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Property filters read from the columns answer exactly as from each event's parsed JSON, for random events and
     * random filters over every operator PostHog has for event properties.
     */
    @Test
    void filtersOnColumnsAnswerAsOnTheParsedEvents() throws Exception {
        final Random random = new Random(20261124);
        final String[] browsers = {"Chrome", "Safari", "Firefox", "chrome", ""};
        final EventBlock.Builder builder = new EventBlock.Builder();
        final List<ObjectNode> parsed = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            final ObjectNode properties = Json.mapper().createObjectNode();
            if (random.nextInt(5) > 0) {
                properties.put("$browser", browsers[random.nextInt(browsers.length)]);
            }
            switch (random.nextInt(4)) {
                case 0 -> properties.put("amount", random.nextInt(100));
                case 1 -> properties.put("amount", String.valueOf(random.nextInt(100)));
                case 2 -> properties.put("amount", random.nextDouble() * 100);
                default -> properties.putNull("amount");
            }
            if (random.nextBoolean()) {
                properties.put("paid", random.nextBoolean());
            }
            parsed.add(properties);
            builder.add(new EventBlock.Row(i, UUID.randomUUID(), UUID.randomUUID(), "d" + i, "e", properties));
        }
        final EventBlock block = EventBlock.decode(builder.build().encode());
        final String[] filters = {
            "[{\"key\":\"$browser\",\"value\":\"chrome\",\"operator\":\"exact\"}]",
            "[{\"key\":\"$browser\",\"value\":[\"Safari\",\"Firefox\"],\"operator\":\"is_not\"}]",
            "[{\"key\":\"$browser\",\"value\":\"ROM\",\"operator\":\"icontains\"}]",
            "[{\"key\":\"$browser\",\"value\":\"^F\",\"operator\":\"regex\"}]",
            "[{\"key\":\"$browser\",\"operator\":\"is_set\"}]",
            "[{\"key\":\"amount\",\"value\":50,\"operator\":\"gt\"}]",
            "[{\"key\":\"amount\",\"value\":\"7\",\"operator\":\"exact\"}]",
            "[{\"key\":\"amount\",\"operator\":\"is_not_set\"}]",
            "[{\"key\":\"paid\",\"value\":[\"true\"],\"operator\":\"exact\"}]",
            "{\"type\":\"OR\",\"values\":[{\"type\":\"AND\",\"values\":[{\"key\":\"$browser\",\"value\":\"Safari\"},"
                    + "{\"key\":\"amount\",\"value\":20,\"operator\":\"lt\"}]},{\"key\":\"paid\",\"value\":false}]}",
        };
        final Instant now = Instant.parse("2026-11-24T12:00:00Z");
        final BlockRows rows = new BlockRows(block, NO_PERSON);
        for (final String text : filters) {
            final PropertyFilter filter = PropertyFilter.parse(Json.mapper().readTree(text));
            final BlockFilter perBlock = BlockFilter.of(block, filter, NO_PERSON, now);
            int matched = 0;
            for (int r = 0; r < block.rows(); r++) {
                final ObjectNode event = parsed.get(r);
                final boolean expected = filter.test(PropertyFilter.Source.ofEvent(event), now);
                assertThat(filter.test(rows.at(r), now)).as("%s on row %d %s", text, r, event).isEqualTo(expected);
                assertThat(perBlock.test(r)).as("%s, decided per value, on row %d %s", text, r, event).isEqualTo(expected);
                matched += expected ? 1 : 0;
            }
            assertThat(matched).as("%s matches some rows and not all", text).isBetween(1, block.rows() - 1);
        }
    }

    @Test
    void aFilterOnOneEventPropertyIsDecidedPerValueAndOthersPerRow() throws Exception {
        final PropertyFilter one = PropertyFilter.parse(Json.mapper().readTree(
                "{\"type\":\"OR\",\"values\":[{\"key\":\"$browser\",\"value\":\"Safari\"},{\"key\":\"$browser\",\"value\":\"Edge\"}]}"));
        assertThat(one.eventKeys()).containsExactly("$browser");
        assertThat(one.readsPersonsOrGroups()).isFalse();
        final PropertyFilter mixed = PropertyFilter.parse(Json.mapper().readTree(
                "[{\"key\":\"$browser\",\"value\":\"Safari\"},{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]"));
        assertThat(mixed.eventKeys()).containsExactly("$browser");
        assertThat(mixed.readsPersonsOrGroups()).isTrue();
        assertThat(PropertyFilter.NONE.eventKeys()).isEmpty();
    }

    @Test
    void aBlockIsSmallerThanItsEventsAsJson() {
        final EventBlock.Builder builder = new EventBlock.Builder();
        long json = 0;
        for (int i = 0; i < 10_000; i++) {
            final EventBlock.Row row = row(1_700_000_000_000_000L + i * 1_000_000L, "p" + (i % 500), "u" + (i % 500), "$pageview",
                    "{\"$browser\":\"Chrome\",\"$os\":\"Mac OS X\",\"$current_url\":\"https://example.com/page/" + (i % 40) + "\"}");
            builder.add(row);
            json += row.properties().toString().length() + 16 + 8 + row.event().length() + row.distinctId().length();
        }
        final int encoded = builder.build().encode().length;
        assertThat(encoded).as("%d bytes against %d as JSON", encoded, json).isLessThan((int) (json / 3));
    }

    private static EventBlock.Row row(final long time, final String person, final String distinctId, final String event,
                                      final String properties) {
        try {
            return new EventBlock.Row(time, UUID.nameUUIDFromBytes((distinctId + time).getBytes()), UUID.nameUUIDFromBytes(person.getBytes()),
                    distinctId, event, (ObjectNode) Json.mapper().readTree(properties));
        } catch (final Exception e) {
            throw new AssertionError(e);
        }
    }
}
