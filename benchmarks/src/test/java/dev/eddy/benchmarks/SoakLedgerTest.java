package dev.eddy.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the soak's acknowledged events must add up to in Eddy: persons, merges and per-person counts. */
class SoakLedgerTest {
    /**
     * Person 0 identified (2 anonymous events, then $identify, then 1 more): one person of 4 events. Person 1's
     * $identify was refused: its anonymous event and its own id's event are two persons, the anonymous one under no
     * property. Person 2 only sent under its own id; person 3 sent nothing.
     */
    private static SoakLedger ledger() {
        final SoakLedger ledger = new SoakLedger(4);
        ledger.acked(0, SoakLedger.ANONYMOUS);
        ledger.acked(0, SoakLedger.ANONYMOUS);
        ledger.acked(0, SoakLedger.IDENTIFY);
        ledger.acked(0, SoakLedger.MAIN);
        ledger.acked(1, SoakLedger.ANONYMOUS);
        ledger.acked(1, SoakLedger.MAIN);
        ledger.acked(2, SoakLedger.MAIN);
        ledger.acked(2, SoakLedger.MAIN);
        ledger.acked(2, SoakLedger.MAIN);
        return ledger;
    }

    @Test
    void anIdentifiedPersonIsOnePersonAndARefusedIdentifyLeavesTwo() {
        final SoakLedger ledger = ledger();
        assertThat(ledger.total()).isEqualTo(9);
        assertThat(ledger.expectedPersons()).isEqualTo(4);
        assertThat(ledger.identified(0)).isTrue();
        assertThat(ledger.identified(1)).isFalse();
        assertThat(ledger.mainEvents(0)).isEqualTo(2);
    }

    @Test
    void aPersonCountsItsOwnIdsEventsAndItsAnonymousOnesOnlyOnceIdentified() {
        final SoakLedger ledger = ledger();
        assertThat(ledger.expectedByPerson(p -> "p" + p)).isEqualTo(Map.of("p0", 4L, "p1", 1L, "p2", 3L));
        assertThat(ledger.expectedUnattributed()).isEqualTo(1);
    }

    @Test
    void differencesNameMissingExtraAndWrongCountsUpToTheLimit() {
        final Map<String, Long> expected = Map.of("p0", 4L, "p1", 1L, "p2", 3L);
        assertThat(SoakLedger.differences(expected, Map.of("p0", 4L, "p1", 1L, "p2", 3L), 10)).isEmpty();
        assertThat(SoakLedger.differences(expected, Map.of("p0", 5L, "p2", 3L, "p9", 2L), 10))
                .containsExactly("p0: Eddy 5, acked 4", "p1: Eddy 0, acked 1", "p9: Eddy 2, acked 0");
        assertThat(SoakLedger.differences(expected, Map.of(), 2)).isEqualTo(List.of("p0: Eddy 0, acked 4", "p1: Eddy 0, acked 1", "1 more"));
    }
}
