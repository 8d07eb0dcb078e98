package dev.eddy.topology.groups;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.groups.GroupState;
import dev.eddy.topology.TopologyFixture;
import dev.eddy.topology.TopologyTest;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Group types, $groupidentify and $groups, through the whole topology. */
class GroupsTopologyTest extends TopologyTest {

    @Test
    void groupIdentifyCreatesTheGroupAndAssignsTheFirstTypeIndex() {
        final CapturedEvent identify = t.send("u", "$groupidentify",
                "{\"$group_type\":\"company\",\"$group_key\":\"acme\",\"$group_set\":{\"name\":\"Acme\",\"seats\":10}}");

        assertThat(t.groupTypes().types()).containsExactly(Map.entry("company", 0));
        final GroupState acme = t.group(0, "acme").orElseThrow();
        assertThat(acme.groupType()).isEqualTo("company");
        assertThat(acme.properties().get("name").asText()).isEqualTo("Acme");
        assertThat(acme.createdAt()).isEqualTo(identify.timestamp());
        assertThat(t.enrichedOf(identify).personId()).isEqualTo(TopologyFixture.uuidOf("u"));
    }

    @Test
    void laterGroupSetsOverwriteKeysAndKeepTheRest() {
        t.send("u", "$groupidentify", "{\"$group_type\":\"company\",\"$group_key\":\"acme\",\"$group_set\":{\"name\":\"Acme\",\"seats\":10}}");
        t.send("v", "$groupidentify", "{\"$group_type\":\"company\",\"$group_key\":\"acme\",\"$group_set\":{\"seats\":12}}");

        final GroupState acme = t.group(0, "acme").orElseThrow();
        assertThat(acme.properties().get("name").asText()).isEqualTo("Acme");
        assertThat(acme.properties().get("seats").asInt()).isEqualTo(12);
        assertThat(acme.version()).isEqualTo(1);
    }

    @Test
    void groupsOnAnEventAttachKeysAndGroupPropertiesButCreateNoGroup() {
        t.send("u", "$groupidentify", "{\"$group_type\":\"company\",\"$group_key\":\"acme\"}");
        final CapturedEvent event = t.send("u", "invoice", "{\"$groups\":{\"company\":\"acme\",\"project\":\"p-1\"}}");

        final EnrichedEvent enriched = t.enrichedOf(event);
        assertThat(enriched.groups()).containsExactlyInAnyOrderEntriesOf(Map.of("0", "acme", "1", "p-1"));
        assertThat(enriched.event().properties().get("$group_0").asText()).isEqualTo("acme");
        assertThat(enriched.event().properties().get("$group_1").asText()).isEqualTo("p-1");
        assertThat(t.groupTypes().types()).containsEntry("project", 1);
        assertThat(t.group(1, "p-1")).as("$groups never creates a group").isEmpty();
    }

    @Test
    void aSixthGroupTypeIsRejectedAndCounted() {
        for (final String type : new String[] {"t0", "t1", "t2", "t3", "t4"}) {
            t.send("u", "e", "{\"$groups\":{\"" + type + "\":\"k\"}}");
        }
        final CapturedEvent sixth = t.send("u", "e", "{\"$groups\":{\"t0\":\"k0\",\"t5\":\"k5\"}}");
        t.send("u", "$groupidentify", "{\"$group_type\":\"t6\",\"$group_key\":\"k6\"}");

        assertThat(t.groupTypes().types()).hasSize(5).doesNotContainKeys("t5", "t6");
        assertThat(t.enrichedOf(sixth).groups()).containsExactly(Map.entry("0", "k0"));
        assertThat(t.warnings("group_type_limit_reached")).isEqualTo(2.0);
    }

    @Test
    void numericGroupKeysAreTakenAsTextAndEmptyOnesIgnored() {
        final CapturedEvent event = t.send("u", "e", "{\"$groups\":{\"org\":42,\"team\":\"\",\"bad\":{\"x\":1}}}");

        assertThat(t.enrichedOf(event).groups()).containsExactly(Map.entry("0", "42"));
        assertThat(t.groupTypes().types()).containsOnlyKeys("org");
    }

    @Test
    void personlessEventsAttachNoGroups() {
        final CapturedEvent event = t.send("u", "e", "{\"$process_person_profile\":false,\"$groups\":{\"company\":\"acme\"}}");

        assertThat(t.enrichedOf(event).groups()).isEmpty();
        assertThat(t.groupTypes().types()).isEmpty();
    }
}
