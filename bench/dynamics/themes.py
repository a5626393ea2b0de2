"""Episode themes: four episodes that teach one lesson, the rule an exact consolidation
writes (the oracle's answer), and a related new question (transfer)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Theme:
    name: str
    episodes: tuple[str, str, str, str]
    rule: str
    question: str


THEMES = [
    Theme(
        "espresso",
        (
            "The espresso ran fast at grind 12 and tasted sour.",
            "A finer grind of 10 slowed the espresso shot but it still tasted thin.",
            "Dosing 18 grams at grind 10 gave a balanced espresso shot.",
            "Another sour, fast espresso at grind 12 was fixed by grinding finer and dosing 18 grams.",
        ),
        "For sour, fast espresso shots grind finer (about 10) and dose 18 grams; grind 12 ran "
        "fast and sour before.",
        "the shot came out quick and acidic, what should I change?",
    ),
    Theme(
        "sourdough",
        (
            "The sourdough loaf came out dense after a cold overnight proof.",
            "A sourdough bake with a 4 hour warm proof rose well but the crumb was gummy.",
            "Baking the sourdough 10 minutes longer at 240 degrees fixed the gummy crumb.",
            "Another dense sourdough loaf after a cold proof; a warm 4 hour proof saved the next one.",
        ),
        "Proof sourdough warm for about 4 hours, not cold overnight, and bake 10 minutes longer at "
        "240 degrees; cold proofs gave dense loaves and short bakes a gummy crumb.",
        "my bread is heavy and gummy inside, any advice?",
    ),
    Theme(
        "brakes",
        (
            "The rear disc brake squealed after the wash.",
            "Cleaning the brake rotor with alcohol stopped the squeal for a day.",
            "Replacing the contaminated brake pads ended the squeal for good.",
            "Another squealing disc brake after degreasing the chain; new pads fixed it again.",
        ),
        "When a disc brake squeals after cleaning or degreasing, replace the pads (they are "
        "contaminated); wiping the rotor with alcohol only helps for a day.",
        "the bike brake screeches when I stop, what fixes it?",
    ),
    Theme(
        "printer",
        (
            "The 3D print showed layer shifts on the tall vase.",
            "Tightening the belts on the printer reduced the layer shifts a little.",
            "Lowering the print speed to 40 mm/s removed the layer shifts on the tall vase.",
            "Another tall print shifted layers at 80 mm/s; at 40 mm/s with tight belts it printed clean.",
        ),
        "For tall 3D prints keep the belts tight and print at about 40 mm/s; at 80 mm/s tall "
        "prints shifted layers.",
        "my tall print keeps shifting halfway up",
    ),
    Theme(
        "tomatoes",
        (
            "The tomato leaves curled and yellowed after daily watering.",
            "Watering the tomatoes every third day, deeply, reduced the yellow leaves.",
            "Mulching the tomato bed kept the soil moist and the leaves stayed green.",
            "Another tomato bed yellowed with daily shallow watering; deep watering every third day fixed it.",
        ),
        "Water tomatoes deeply every third day and mulch the bed; daily shallow watering "
        "yellowed and curled the leaves.",
        "the plant's leaves are turning yellow and curling",
    ),
    Theme(
        "violin",
        (
            "A tall bridge was fitted and the player reported a harsh response.",
            "The customer heard a wolf tone near C on the G string after the tall bridge job.",
            "A refit with a lower bridge cut and thinner feet eased the wolf and evened the response.",
            "Another tall bridge gave a wolf near C on the G string; a lower cut fixed it.",
        ),
        "Prefer a lower bridge cut with thinner feet when the response is harsh or a wolf "
        "appears near C on the G string; tall bridges caused both before.",
        "customer says the G string howls near C",
    ),
]
