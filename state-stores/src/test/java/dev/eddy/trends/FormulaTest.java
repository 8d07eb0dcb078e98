package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Trend formulas with PostHog's (Python's) arithmetic. */
class FormulaTest {

    @Test
    void seriesCombinePerBucket() {
        // test_trends_query_runner: $pageview and $pageleave per day, A+2*B and A-B.
        final double[] pageviews = {1, 0, 1, 3, 1, 0, 2, 0, 1, 0, 1};
        final double[] pageleaves = {0, 0, 1, 1, 3, 0, 0, 1, 0, 0, 0};
        final Formula sum = Formula.parse("A+2*B", 2);
        final Formula difference = Formula.parse("a - b", 2);
        final double[] plus = new double[pageviews.length];
        final double[] minus = new double[pageviews.length];
        for (int i = 0; i < pageviews.length; i++) {
            plus[i] = sum.evaluate(pageviews[i], pageleaves[i]);
            minus[i] = difference.evaluate(pageviews[i], pageleaves[i]);
        }
        assertThat(plus).containsExactly(1, 0, 3, 5, 7, 0, 2, 2, 1, 0, 1);
        assertThat(minus).containsExactly(1, 0, 0, 2, -2, 0, 2, -1, 1, 0, 1);
        assertThat(sum.label()).isEqualTo("Formula (A+2*B)");
    }

    @Test
    void divisionIsExactAndByZeroIsZero() {
        assertThat(Formula.parse("B/A", 2).evaluate(3, 1)).isEqualTo(0.3333333333333333);
        assertThat(Formula.parse("B/A", 2).evaluate(0, 1)).isZero();
        assertThat(Formula.parse("(B/A + 1) * 100", 2).evaluate(0, 5)).isEqualTo(100);
        assertThat(Formula.parse("A % B", 2).evaluate(5, 0)).isZero();
    }

    @Test
    void pythonPrecedenceAndSigns() {
        assertThat(Formula.parse("-A ** 2", 1).evaluate(2)).isEqualTo(-4);
        assertThat(Formula.parse("A ** B ** 2", 2).evaluate(2, 3)).isEqualTo(512);
        assertThat(Formula.parse("A ** -1", 1).evaluate(4)).isEqualTo(0.25);
        assertThat(Formula.parse("A - B - C", 3).evaluate(10, 3, 2)).isEqualTo(5);
        assertThat(Formula.parse("A / B * C", 3).evaluate(8, 2, 3)).isEqualTo(12);
        assertThat(Formula.parse("A + B * C", 3).evaluate(1, 2, 3)).isEqualTo(7);
        assertThat(Formula.parse("-7 % 3", 0).evaluate()).as("the divisor's sign").isEqualTo(2);
        assertThat(Formula.parse("7 % -3", 0).evaluate()).isEqualTo(-2);
        assertThat(Formula.parse("+A * 1.5", 1).evaluate(4)).isEqualTo(6);
    }

    @Test
    void anythingElseIsRefusedWithPostHogsWords() {
        assertThatThrownBy(() -> Formula.parse("A + x2", 1)).hasMessage("Constant x2 not supported");
        assertThatThrownBy(() -> Formula.parse("A // B", 2)).hasMessage("Operator FloorDiv not supported");
        assertThatThrownBy(() -> Formula.parse("A + C", 2)).hasMessageContaining("series C");
        assertThatThrownBy(() -> Formula.parse("(A + B", 2)).hasMessageContaining("malformed");
        assertThatThrownBy(() -> Formula.parse("A B", 2)).hasMessageContaining("malformed");
        assertThatThrownBy(() -> Formula.parse("", 1)).hasMessageContaining("malformed");
    }
}
