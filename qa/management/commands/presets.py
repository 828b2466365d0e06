"""python manage.py presets: the pipeline presets by group (what each is for, what it needs) and every
parameter they set."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from qa import presets
from qa.pipeline.config import preset_guide


class Command(BaseCommand):
    help = "List pipeline presets and their parameters."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        configs = [presets.get_preset(name).to_dict() for name in presets.PRESET_NAMES]
        if options["json"]:
            self.stdout.write(json.dumps(configs, indent=2))
            return
        by_name = {config["name"]: config for config in configs}
        for group in preset_guide.groups():
            self.stdout.write(f"== {group.title} ==")
            for summary in group.presets:
                self._write(by_name[summary.name], summary)

    def _write(self, config: dict, summary: preset_guide.PresetSummary) -> None:
        self.stdout.write(f"{config['name']}: {summary.use} [{summary.cost}]")
        for section in ("retrieval", "answer"):
            # llm-only has no retrieval stage: its section is None, not an empty dict.
            values = config[section]
            params = ", ".join(f"{k}={v}" for k, v in values.items()) if values else "none"
            self.stdout.write(f"    {section}: {params}")
        self.stdout.write(f"    reranker: {config['reranker']}")
