-- mk/man-tables.lua - pandoc filter for man pages: every table becomes a
-- definition list, so groff never lays out a table wider than the page
-- (tbl's "cannot adjust line" and "table text block will not fit"
-- warnings, lintian's groff-message).
--
-- Row by row: the first cell is the term; the other cells are its
-- definition, one line each, as "HEADER: cell" when the table has more
-- than two columns (a two-column table's second cell alone). Empty cells
-- are left out; a caption stays as a paragraph before the list; a cell's
-- block content (lists in grid tables) is flattened to one line.
-- Works for any table in the source (pandoc >= 2.11: to_simple_table).

local function cell_inlines(blocks)
	return pandoc.utils.blocks_to_inlines(blocks, { pandoc.Space() })
end

local function is_empty(inlines)
	return #inlines == 0
end

function Table(tbl)
	local simple = pandoc.utils.to_simple_table(tbl)
	local headers = {}
	for i, cell in ipairs(simple.headers) do
		headers[i] = cell_inlines(cell)
	end
	local labelled = #simple.headers > 2
	local items = {}
	for _, row in ipairs(simple.rows) do
		local term = cell_inlines(row[1] or {})
		local def = pandoc.List()
		for i = 2, #row do
			local value = cell_inlines(row[i])
			if not is_empty(value) then
				if #def > 0 then
					def:insert(pandoc.RawInline("man", "\n.br\n\\&"))
				end
				if labelled and headers[i] and not is_empty(headers[i]) then
					def:extend(headers[i])
					def:extend({ pandoc.Str(":"), pandoc.Space() })
				end
				def:extend(value)
			end
		end
		table.insert(items, { term, { pandoc.Plain(def) } })
	end
	local out = pandoc.List()
	if simple.caption and not is_empty(simple.caption) then
		out:insert(pandoc.Para(simple.caption))
	end
	out:insert(pandoc.DefinitionList(items))
	return out
end
