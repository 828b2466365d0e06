"""python manage.py presets: list the pipeline presets and every parameter they set."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from qa import presets


class Command(BaseCommand):
    help = "List pipeline presets and their parameters."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        configs = [presets.get_preset(name).to_dict() for name in presets.PRESET_NAMES]
        if options["json"]:
            self.stdout.write(json.dumps(configs, indent=2))
            return
        for config in configs:
            self.stdout.write(f"{config['name']}: {config['description']}")
            for section in ("retrieval", "answer"):
                # llm-only has no retrieval stage: its section is None, not an empty dict.
                values = config[section]
                params = ", ".join(f"{k}={v}" for k, v in values.items()) if values else "none"
                self.stdout.write(f"    {section}: {params}")
            self.stdout.write(f"    reranker: {config['reranker']}")
