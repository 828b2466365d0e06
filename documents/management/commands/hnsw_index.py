"""python manage.py hnsw_index [--unit sentence|chunk|all] [--m M --ef-construction E]

Shows the HNSW indexes' build parameters, or rebuilds them with others while
the site keeps serving (documents/vector_index.py says when that pays).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from documents.errors import DomainError
from documents.vector_index import INDEXES, hnsw_rebuild, index_parameters


class Command(BaseCommand):
    help = "Show or rebuild the sentence and chunk HNSW indexes (m, ef_construction)."

    def add_arguments(self, parser):
        parser.add_argument("--unit", choices=[*INDEXES, "all"], default="all")
        parser.add_argument("--m", type=int, help="graph degree; with --ef-construction, rebuild")
        parser.add_argument("--ef-construction", type=int, help="build-time search breadth")
        parser.add_argument(
            "--maintenance-work-mem",
            default="2GB",
            help="memory for the build (the whole graph; default 2GB)",
        )

    def handle(self, *args, **options):
        units = list(INDEXES) if options["unit"] == "all" else [options["unit"]]
        m, ef_construction = options["m"], options["ef_construction"]
        if (m is None) != (ef_construction is None):
            raise CommandError("give both --m and --ef-construction to rebuild, or neither to show")
        try:
            for unit in units:
                if m is not None:
                    self.stdout.write(f"{unit}: building m={m}, ef_construction={ef_construction} ...")
                    seconds = hnsw_rebuild(
                        unit=unit,
                        m=m,
                        ef_construction=ef_construction,
                        maintenance_work_mem=options["maintenance_work_mem"],
                    )
                    self.stdout.write(f"{unit}: built in {seconds:.0f}s")
                built_m, built_ef = index_parameters(unit)
                self.stdout.write(f"{unit}: m={built_m}, ef_construction={built_ef}")
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
